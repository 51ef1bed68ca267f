// Regenerates the committed openapi.json from the route schemas: `npm run openapi:write`.
import fs from 'node:fs';
import path from 'node:path';
import { renderOpenApi } from '../test/support/openapi.ts';

const file = path.join(import.meta.dirname, '..', 'openapi.json');
fs.writeFileSync(file, await renderOpenApi());
console.log(`wrote ${file}`);
