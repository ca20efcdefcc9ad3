// The documentation holds together: every relative link and anchor in README.md and docs/ resolves
// (on the repository's file view and on the VitePress site, whose heading anchors are computed
// differently), every citation of a docs/ page in the code names a heading that exists, nothing
// cites the team's notes outside the repository or an issue number, and the code blocks marked
// `js run` run against the built packages. The site itself is built by `npm run docs:build`, not
// here: it takes longer than the whole of this file.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Folders that hold no source of ours: dependencies, builds, data, generated files. */
const SKIP = new Set(['node_modules', 'dist', '.git', 'data', 'release', 'test-results', 'cache', 'coverage']);
const SKIP_PATHS = new Set(['packages/facilitator/console']);
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;

function walk(dir: string, keep: (rel: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!SKIP.has(entry.name) && !SKIP_PATHS.has(rel)) out.push(...walk(rel, keep));
    } else if (keep(rel)) out.push(rel);
  }
  return out;
}

const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');
const PAGES = ['README.md', ...walk('docs', (rel) => rel.endsWith('.md'))];

/** The lines of a Markdown file outside fenced code blocks, with their numbers. */
function prose(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) out.push({ line, n: i + 1 });
  });
  return out;
}

function headingText(line: string): string | null {
  const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (!m) return null;
  return m[1]!
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim();
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, each space a hyphen. */
function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchor VitePress gives a heading (its default slugify): runs of punctuation and space are one hyphen. */
function vitepressSlug(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[\u0300-\u036F]/g, '')
      // eslint-disable-next-line no-control-regex -- VitePress drops control characters too
      .replace(/[\u0000-\u001f]/g, '')
      .replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^-+|-+$/g, '')
      .replace(/^(\d)/, '_$1')
      .toLowerCase()
  );
}

function anchorsOf(rel: string, slug: (text: string) => string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of prose(read(rel))) {
    const text = headingText(line);
    if (text === null) continue;
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

/** What is wrong with `anchor` in the Markdown file `rel`, or null when both anchors exist. */
function anchorProblem(rel: string, anchor: string): string | null {
  const onGitHub = anchorsOf(rel, githubSlug).has(anchor);
  const onSite = anchorsOf(rel, vitepressSlug).has(anchor);
  if (onGitHub && onSite) return null;
  if (!onGitHub && !onSite) return `${rel} has no heading #${anchor}`;
  return `${rel}#${anchor} resolves ${onGitHub ? 'on GitHub but not on the site' : 'on the site but not on GitHub'}: reword the heading`;
}

function linkProblem(from: string, target: string): string | null {
  const [file = '', anchor] = target.split('#', 2);
  const resolved = file ? path.posix.normalize(path.posix.join(path.posix.dirname(from), file)) : from;
  if (resolved.startsWith('..')) return `${target} leaves the repository`;
  if (!fs.existsSync(path.join(ROOT, resolved))) return `${target}: no such file ${resolved}`;
  if (anchor === undefined || anchor === '') return null;
  if (!resolved.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  return anchorProblem(resolved, anchor);
}

describe('the documentation', () => {
  it('finds the pages: the README and docs/', () => {
    expect(PAGES).toEqual(
      expect.arrayContaining(['README.md', 'docs/index.md', 'docs/protocol.md', 'docs/operating.md']),
    );
  });

  it('every relative link and anchor in README.md and docs/ resolves', () => {
    const problems: string[] = [];
    let links = 0;
    for (const page of PAGES) {
      for (const { line, n } of prose(read(page))) {
        const text = line.replace(/`[^`]*`/g, '');
        for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const target = m[1]!;
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
          links++;
          const problem = linkProblem(page, target);
          if (problem) problems.push(`${page}:${n}: ${problem}`);
        }
      }
    }
    expect(links).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it('every fenced code block opens with its language and closes bare', () => {
    // A fence left open swallows the prose after it into the snippet that users copy and tests run;
    // with every opening fence naming its language, the next block's opening shows where it happened.
    const problems: string[] = [];
    for (const page of PAGES) {
      let inside = false;
      read(page)
        .split('\n')
        .forEach((line, i) => {
          const m = /^\s*```(.*)$/.exec(line);
          if (!m) return;
          const info = m[1]!.trim();
          if (!inside && info === '') problems.push(`${page}:${i + 1}: a fence opens without a language`);
          if (inside && info !== '')
            problems.push(`${page}:${i + 1}: \`\`\`${info} inside a block: the one before is not closed`);
          inside = !inside;
        });
      if (inside) problems.push(`${page}: the last fence is not closed`);
    }
    expect(problems).toEqual([]);
  });

  it('the README is a map: at most 300 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(300);
  });
});

describe('citations', () => {
  const sources = walk('', (rel) => CODE.test(rel) || rel.endsWith('.md'));

  it('every citation of a docs/ page in the code and the package docs names a heading that exists', () => {
    const problems: string[] = [];
    let citations = 0;
    // Changesets speak of the packages as published (a page of @svc/ledger's own docs folder, say).
    const citing = sources.filter((f) => !f.startsWith('docs/') && !f.startsWith('.changeset/') && f !== 'README.md');
    for (const rel of citing) {
      // A package cites its own docs/ folder (packages/ledger/docs/…) as docs/…, the repository's
      // pages likewise: the package's own folder is tried first.
      const pkg = /^packages\/[^/]+\//.exec(rel)?.[0] ?? '';
      read(rel)
        .split('\n')
        .forEach((line, i) => {
          for (const m of line.matchAll(/(?<![\w./-])docs\/([\w./-]+\.md)(?:#([\w-]+))?/g)) {
            citations++;
            const file = [`${pkg}docs/${m[1]}`, `docs/${m[1]}`].find((f) => fs.existsSync(path.join(ROOT, f)));
            if (!file) problems.push(`${rel}:${i + 1}: no such page docs/${m[1]}`);
            else if (m[2]) {
              const problem = anchorProblem(file, m[2]);
              if (problem) problems.push(`${rel}:${i + 1}: ${problem}`);
            }
          }
        });
    }
    expect(citations).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });

  it('nothing cites the notes outside the repository', () => {
    // Spelled in pieces, so that this file does not cite them itself.
    const names = ['PROTOCOL', 'ARCHITECTURE', 'FACTS', 'STYLE'].map((n) => `${n}\\.md`);
    const forbidden = new RegExp(`${names.join('|')}|\\.\\./${'shared'}\\b`);
    const found = sources.flatMap((rel) =>
      read(rel)
        .split('\n')
        .flatMap((line, i) => (forbidden.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('no source file names an issue number: a comment says why instead', () => {
    const issue = new RegExp(`\\b${'issue'}s? #?\\d+`, 'i');
    const found = sources
      .filter((rel) => CODE.test(rel) || rel.startsWith('docs/') || rel === 'README.md')
      .flatMap((rel) =>
        read(rel)
          .split('\n')
          .flatMap((line, i) => (issue.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found).toEqual([]);
  });
});

describe('code blocks marked `js run`', () => {
  const blocks = PAGES.flatMap((page) =>
    [...read(page).matchAll(/^```js run\n([\s\S]*?)^```$/gm)].map((m, i) => ({ page, i, code: m[1]! })),
  );

  it('there is at least one', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  // Written under node_modules so that their imports resolve to this repository's built packages.
  const dir = path.join(ROOT, 'node_modules', '.cache', 'svc-docs-run');
  for (const { page, i, code } of blocks) {
    it(`${page}, block ${i + 1}, runs with plain node`, async () => {
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `${page.replace(/[/.]/g, '-')}-${i + 1}.mjs`);
      fs.writeFileSync(file, code);
      const { stderr } = await run(process.execPath, [file], { cwd: ROOT, timeout: 30_000 });
      expect(stderr).toBe('');
    });
  }
});
