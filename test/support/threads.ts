import fs from 'node:fs';

/** Each thread of a process (Linux): its name and its nice value (/proc/<pid>/task/<tid>/stat, field 19). */
export function threadsOf(pid: number | 'self'): Array<{ name: string; nice: number }> {
  return fs.readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The fields after the name, which is in parentheses and may hold spaces: state is field 3.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ name, nice: Number(fields[19 - 3]) }];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}
