// Options every postgres.js pool of the facilitator starts from.
//
// fetch_types: false. By default postgres.js reads the server's array types on every new
// connection, from a promise nobody handles (3.4.9, connection.js `return fetchArrayTypes()`):
// when the connection dies during that read — the server crashed, or a pool whose query missed its
// deadline was ended (ReplaceablePool) — the rejection is unhandled and kills the process. Seen as
// an instance exiting under PostgreSQL faults (cluster-database-faults, 2026-11-27). Without the
// array types the driver cannot convert JavaScript arrays or array columns, so arrays cross as
// JSON text: `ARRAY(SELECT json_array_elements_text($1::text::json))` in, `array_to_json(col)` out.
// Upstream: porsager/postgres #1192, #1205, #1223 (the unhandled rejection); with fetch_types off,
// reserve() on a pool without an open connection never settles (#751, #1219), which the writer
// works around (postgres-batch.ts). test/store/postgres-driver.test.ts holds both.
import type { Options, PostgresType } from 'postgres';

export const PG_DRIVER_OPTIONS = { fetch_types: false } as const satisfies Options<Record<string, PostgresType>>;
