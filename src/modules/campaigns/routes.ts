import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceOf } from '../../platform/auth/authenticate.ts';
import { invalidField } from '../../platform/errors.ts';
import { registerMultipartForm } from '../../platform/http/multipart-form.ts';
import { ListOf, mediaBody, NoContent } from '../../platform/http/schemas.ts';
import { pageRequest } from '../../platform/pagination.ts';
import { MAX_UPLOAD_BYTES } from './contacts-csv.ts';
import type { CampaignsService } from './service.ts';
import {
  Campaign,
  CampaignCreate,
  CampaignListQuery,
  CampaignParams,
  CampaignStatsDetail,
  CampaignUpdate,
  Contact,
  ContactDetail,
  ContactListQuery,
  ContactParams,
  UploadCsv,
  UploadMultipart,
  UploadResult,
} from './schemas.ts';

// Campaigns (13 operations): CRUD, the contact upload (text/csv body or multipart `file`),
// contacts, start/pause/cancel, the results CSV and stats.

const tags = ['campaigns'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const write = { access: { auth: 'workspace', scope: 'write' } } as const;

export function campaignsRoutes(service: CampaignsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    const files = new WeakMap<object, Buffer>();
    await registerMultipartForm(app, {
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 2, parts: 3, fieldSize: 1024 },
      async onFile(request, part) {
        const bytes = await part.toBuffer();
        if (part.fieldname === 'file') files.set(request, bytes);
        return `${bytes.length} bytes`;
      },
    });
    app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: MAX_UPLOAD_BYTES }, (_request, body, done) => done(null, body));

    app.post(
      '/v1/campaigns',
      { schema: { operationId: 'createCampaign', summary: 'Create a campaign (draft)', tags, body: CampaignCreate, response: { 201: Campaign } }, config: write },
      async (request, reply) => {
        const created = await service.create(workspaceOf(request), request.body);
        request.auditResourceId = created.id;
        return reply.code(201).send(created);
      },
    );
    app.get(
      '/v1/campaigns',
      { schema: { operationId: 'listCampaigns', summary: 'List campaigns, newest first', tags, querystring: CampaignListQuery, response: { 200: ListOf(Campaign, 'CampaignList') } }, config: read },
      async (request) => service.list(workspaceOf(request), pageRequest(request.query), request.query.status),
    );
    app.get(
      '/v1/campaigns/:id',
      { schema: { operationId: 'getCampaign', summary: 'Get a campaign with its contact counts', tags, params: CampaignParams, response: { 200: Campaign } }, config: read },
      async (request) => service.get(workspaceOf(request), request.params.id),
    );
    app.patch(
      '/v1/campaigns/:id',
      {
        schema: { operationId: 'updateCampaign', summary: 'Change a campaign not ended yet (concurrency and window apply to the next dial)', tags, params: CampaignParams, body: CampaignUpdate, response: { 200: Campaign } },
        config: write,
      },
      async (request) => service.update(workspaceOf(request), request.params.id, request.body),
    );
    app.delete(
      '/v1/campaigns/:id',
      { schema: { operationId: 'deleteCampaign', summary: 'Delete a campaign and its contacts (409 while running); its calls are kept', tags, params: CampaignParams, response: { 204: NoContent } }, config: write },
      async (request, reply) => {
        await service.remove(workspaceOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
    app.post(
      '/v1/campaigns/:id/upload',
      {
        schema: {
          operationId: 'uploadCampaignContacts',
          summary: 'Add contacts from a CSV (text/csv body or multipart file): phone column phone|phone_number|number|to, optional timezone, other columns become call variables',
          description:
            'Appends while the campaign is draft or ready (409 invalid_state otherwise); the first upload with contacts makes a draft ready. Numbers are normalised to E.164 with default_country; duplicates and do-not-call numbers are skipped; each rejected row is listed with its line and reason. Over 10 MiB or 100,000 data rows the upload is refused whole (413).',
          tags,
          params: CampaignParams,
          body: { content: { 'text/csv': { schema: UploadCsv }, 'multipart/form-data': { schema: UploadMultipart } } } as never,
          response: { 200: UploadResult },
        },
        config: write,
      },
      async (request) => {
        let bytes: Buffer | undefined;
        if (request.isMultipart()) bytes = files.get(request);
        else if (typeof request.body === 'string') bytes = Buffer.from(request.body, 'utf8');
        if (!bytes) throw invalidField('file', 'must be a CSV file part (multipart) or a text/csv body');
        return service.upload(workspaceOf(request), request.params.id, bytes);
      },
    );
    app.get(
      '/v1/campaigns/:id/contacts',
      { schema: { operationId: 'listCampaignContacts', summary: 'Contacts of a campaign, in upload order', tags, params: CampaignParams, querystring: ContactListQuery, response: { 200: ListOf(Contact, 'CampaignContactList') } }, config: read },
      async (request) => service.contacts(workspaceOf(request), request.params.id, pageRequest(request.query), request.query.status),
    );
    app.get(
      '/v1/campaigns/:id/contacts/:contact_id',
      { schema: { operationId: 'getCampaignContact', summary: 'A contact with every attempt and its call id', tags, params: ContactParams, response: { 200: ContactDetail } }, config: read },
      async (request) => service.contact(workspaceOf(request), request.params.id, request.params.contact_id),
    );
    app.post(
      '/v1/campaigns/:id/start',
      {
        schema: { operationId: 'startCampaign', summary: 'Start a ready campaign, or resume a paused one (402 when the wallet is empty)', tags, params: CampaignParams, response: { 200: Campaign } },
        config: write,
      },
      async (request) => service.start(workspaceOf(request), request.params.id),
    );
    app.post(
      '/v1/campaigns/:id/pause',
      { schema: { operationId: 'pauseCampaign', summary: 'Pause a running campaign: nothing more is dialed, live calls finish', tags, params: CampaignParams, response: { 200: Campaign } }, config: write },
      async (request) => service.pause(workspaceOf(request), request.params.id),
    );
    app.post(
      '/v1/campaigns/:id/cancel',
      { schema: { operationId: 'cancelCampaign', summary: 'Cancel a campaign not ended yet: contacts not called are canceled, live calls finish', tags, params: CampaignParams, response: { 200: Campaign } }, config: write },
      async (request) => service.cancel(workspaceOf(request), request.params.id),
    );
    app.get(
      '/v1/campaigns/:id/results',
      {
        schema: {
          operationId: 'exportCampaignResults',
          summary: 'Results as CSV (text/csv): one row per contact with its latest call, variables and extracted fields',
          tags,
          params: CampaignParams,
          response: { 200: mediaBody('text/csv', 'CSV with a header row') },
        },
        config: read,
      },
      async (request, reply) => {
        const { filename, csv } = await service.results(workspaceOf(request), request.params.id);
        return reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${filename}"`).send(csv as never);
      },
    );
    app.get(
      '/v1/campaigns/:id/stats',
      { schema: { operationId: 'getCampaignStats', summary: 'Contact counts, calls placed and their outcomes, duration and cost', tags, params: CampaignParams, response: { 200: CampaignStatsDetail } }, config: read },
      async (request) => service.stats(workspaceOf(request), request.params.id),
    );
  };
}
