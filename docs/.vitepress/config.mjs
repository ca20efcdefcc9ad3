// The documentation site: VitePress over the pages of docs/ (`npm run docs:build`). The pages are
// written to read the same on the repository's file view, so links to files outside docs/ (package
// READMEs, the channel contract, the bench's profiles) stay relative paths into the repository;
// the site does not carry those files, and test/docs/links.test.ts checks they exist.
import { defineConfig } from 'vitepress';

export default defineConfig({
  title: 'svc',
  description: 'Metered payments for HTTP APIs: x402 v2, payment channels, cumulative vouchers.',
  cleanUrls: true,
  ignoreDeadLinks: [/(^|\/)\.\.\//],
  themeConfig: {
    nav: [
      { text: 'Selling', link: '/selling' },
      { text: 'Buying', link: '/buying' },
      { text: 'Protocol', link: '/protocol' },
      { text: 'Operating', link: '/operating' },
    ],
    sidebar: [
      {
        text: 'Use',
        items: [
          { text: 'Selling', link: '/selling' },
          { text: 'Buying', link: '/buying' },
          { text: 'Agents', link: '/agents' },
          { text: 'The demo and the console', link: '/demo' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'The protocol', link: '/protocol' },
          { text: 'batch-settlement on Stellar', link: '/schemes/scheme_batch_settlement_stellar' },
          { text: 'Operating svc', link: '/operating' },
        ],
      },
      {
        text: 'Inside',
        items: [
          { text: 'Architecture', link: '/architecture' },
          { text: 'Performance', link: '/performance' },
        ],
      },
    ],
    outline: [2, 3],
  },
});
