// Creates the migrated PGlite data directory that every test file copies (initialising a fresh
// PGlite takes seconds; copying a ready one takes milliseconds). Usage: prepare-template.ts <dir>
import { migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: prepare-template.ts <dir>');
const database = await openDatabase({ pgliteDir: dir });
await migrateToLatest(database);
await database.close();
