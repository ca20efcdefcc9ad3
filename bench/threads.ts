// CPU time of a process's threads, and what the process wrote, read from /proc (Linux): what each
// thread of a server really spent, which a sampling profile cannot tell on a busy machine (a sample
// lands on whatever the thread was running when it was preempted). Elsewhere the readings are empty.
import fs from 'node:fs';

const TICK_US = 10_000; // USER_HZ is 100 on Linux

/** CPU µs so far of each thread: `main`, and `thread <tid>` for the others (threadpool, worker threads, V8's helpers). */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after the parenthesised name: state is 3rd, utime 14th, stime 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const us = (Number(fields[11]) + Number(fields[12])) * TICK_US;
      // Node names every thread "node"; the main thread is the one whose id is the process's.
      const kind = tid === String(pid) ? 'main' : `thread ${tid}`;
      out.set(kind, (out.get(kind) ?? 0) + us);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** The CPU each thread kind spent between two readings. */
export function cpuSince(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [kind, us] of after) out.set(kind, us - (before.get(kind) ?? 0));
  return out;
}

/** What a process wrote: bytes sent to the storage layer and write system calls (/proc/<pid>/io). */
export function processWrites(pid: number): { bytes: number; calls: number } {
  try {
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? 0);
    return { bytes: field('write_bytes'), calls: field('syscw') };
  } catch {
    return { bytes: 0, calls: 0 };
  }
}
