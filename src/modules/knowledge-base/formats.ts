// Document formats a source may hold, told by a file's name or media type. Apart from the
// extraction (extract.ts) so that the API process does not load the PDF, DOCX and HTML libraries:
// only the CPU pool's threads extract text (ingest-worker.ts).

export const FORMATS = ['txt', 'md', 'html', 'pdf', 'docx', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

const BY_EXTENSION: Record<string, Format> = {
  txt: 'txt',
  text: 'txt',
  md: 'md',
  markdown: 'md',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
  docx: 'docx',
  csv: 'csv',
};

const BY_MEDIA_TYPE: Record<string, Format> = {
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/x-markdown': 'md',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/csv': 'csv',
  'application/csv': 'csv',
};

export const SUPPORTED_FORMATS_TEXT = 'txt, md, html, pdf, docx, csv';

const mediaEssence = (contentType: string | undefined) => (contentType ?? '').split(';')[0].trim().toLowerCase();

/** Format of an uploaded file: by its extension, else its declared media type; undefined when unsupported. */
export function formatOfFile(filename: string, mimetype: string | undefined): Format | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  if (extension && BY_EXTENSION[extension]) return BY_EXTENSION[extension];
  return BY_MEDIA_TYPE[mediaEssence(mimetype)];
}

/** Format of a fetched URL: by its Content-Type, else the path's extension. */
export function formatOfResponse(contentType: string | undefined, url: string): Format | undefined {
  const byType = BY_MEDIA_TYPE[mediaEssence(contentType)];
  if (byType) return byType;
  const essence = mediaEssence(contentType);
  if (essence && essence !== 'application/octet-stream') return undefined;
  return formatOfFile(new URL(url).pathname, undefined);
}
