// A versioned schema change. Each adapter keeps its own ordered list; `schema_migrations` records
// which versions a database has, so every start applies only what is missing, once, in order.

export interface Migration {
  /** 1, 2, 3, … with no gaps; never renumber or edit one that has shipped: add the next. */
  version: number;
  name: string;
  sql: string;
}

/** Fails at load time on a list that is out of order, so a bad edit cannot reach a database. */
export function checkedMigrations(list: readonly Migration[]): readonly Migration[] {
  list.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
  });
  return list;
}

/** The newest version this build knows; a database ahead of it was migrated by a newer build. */
export function latestVersion(list: readonly Migration[]): number {
  return list.at(-1)?.version ?? 0;
}

export function refuseNewerSchema(current: number, list: readonly Migration[]): void {
  const known = latestVersion(list);
  if (current > known) {
    throw new Error(
      `the database schema is at version ${current}, newer than this build knows (${known}); upgrade svc`,
    );
  }
}
