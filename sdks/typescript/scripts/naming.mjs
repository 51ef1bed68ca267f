// Where each operation of openapi.json lives in the SDK: `client.<resource>.<method>()`.
// Resources follow the OpenAPI tag (camelCased) unless an operation is moved; methods are the
// operationId without its resource noun (`createAgent` → agents.create, `getAgent` →
// agents.retrieve), as Stripe and OpenAI name them, with the irregular ones listed below.
// A new operation gets a name by the rule, so the SDK never silently lacks one after
// `npm run generate`; the suite's coverage check fails until it is regenerated.

/** tag → resource property, where camelCasing the tag is not the name. */
const RESOURCE_OF_TAG = {
  'do-not-call': 'dnc',
  'phone numbers': 'phoneNumbers',
  'knowledge-base': 'knowledgeBases',
  voice: 'voiceSessions',
};

/** Nouns stripped from operationIds, per resource (longest first is applied). */
const NOUNS = {
  agents: ['Agents', 'Agent'],
  analytics: ['Analytics'],
  apiKeys: ['ApiKeys', 'ApiKey'],
  auditLog: ['AuditLog'],
  branding: ['Branding'],
  calls: ['Calls', 'Call'],
  campaigns: ['Campaigns', 'Campaign'],
  dnc: ['DoNotCall'],
  knowledgeBases: ['KnowledgeBases', 'KnowledgeBase', 'Knowledge'],
  payments: ['Payments', 'Payment'],
  phoneNumbers: ['PhoneNumbers', 'PhoneNumber'],
  schedules: ['Schedules', 'Schedule'],
  voiceSessions: ['VoiceSessions', 'VoiceSession'],
  wallet: ['Wallet'],
  webhooks: ['Webhooks', 'Webhook'],
  widgets: ['Widgets', 'Widget'],
  workspaces: ['Workspaces', 'Workspace'],
  invitations: ['Invitation'],
};

/** operationId → [resource, method] where the rule gives the wrong place or an awkward name. */
const OVERRIDES = {
  // auth
  refreshToken: ['auth', 'refresh'],
  getMe: ['auth', 'me'],
  // catalog: two resources
  listVoices: ['voices', 'list'],
  previewVoice: ['voices', 'preview'],
  listAgentTemplates: ['agentTemplates', 'list'],
  // voice: media tokens beside the sessions
  createMediaToken: ['media', 'createToken'],
  getMediaHealth: ['media', 'health'],
  getVoiceSessionTranscript: ['voiceSessions', 'transcript'],
  // public endpoints, grouped by what they are
  getHealth: ['health', 'check'],
  demoChat: ['demo', 'chat'],
  placeDemoCall: ['demo', 'call'],
  ingestEvents: ['events', 'ingest'],
  sendContactMessage: ['contact', 'send'],
  subscribeNewsletter: ['newsletter', 'subscribe'],
  unsubscribeNewsletter: ['newsletter', 'unsubscribe'],
  // calls
  createOutboundCall: ['calls', 'create'],
  exportCalls: ['calls', 'export'],
  getCallEvents: ['calls', 'events'],
  getCallRecording: ['calls', 'recording'],
  getCallRecordingMp3: ['calls', 'recordingMp3'],
  getCallTranscript: ['calls', 'transcript'],
  createSandboxInboundCall: ['sandbox', 'inboundCall'],
  // campaigns
  exportCampaignResults: ['campaigns', 'results'],
  getCampaignStats: ['campaigns', 'stats'],
  uploadCampaignContacts: ['campaigns', 'upload'],
  // knowledge bases: sources and chunks
  addKnowledgeSource: ['knowledgeBases', 'addSource'],
  getKnowledgeSource: ['knowledgeBases', 'retrieveSource'],
  // analytics
  getAgentAnalytics: ['analytics', 'agent'],
  getAnalyticsOverview: ['analytics', 'overview'],
  getCallSeries: ['analytics', 'calls'],
  // payments and wallet
  paymentsWebhook: ['payments', 'webhook'],
  topUpWallet: ['payments', 'topUp'],
  getPricing: ['wallet', 'pricing'],
  getUsage: ['wallet', 'usage'],
  listWalletTransactions: ['wallet', 'transactions'],
  getBrandingByDomain: ['branding', 'retrieveByDomain'],
  // phone numbers
  searchAvailablePhoneNumbers: ['phoneNumbers', 'searchAvailable'],
  buyPhoneNumber: ['phoneNumbers', 'buy'],
  importPhoneNumber: ['phoneNumbers', 'import'],
  releasePhoneNumber: ['phoneNumbers', 'release'],
  // webhooks
  getWebhook: ['webhooks', 'retrieve'],
  putWebhook: ['webhooks', 'put'],
  deleteWebhook: ['webhooks', 'delete'],
  testWebhook: ['webhooks', 'test'],
  rotateWebhookSecret: ['webhooks', 'rotateSecret'],
  getWebhookDelivery: ['webhooks', 'retrieveDelivery'],
  // widgets
  getWidgetConfig: ['widgets', 'config'],
  getWidgetEmbedScript: ['widgets', 'embedScript'],
  startWidgetVoice: ['widgets', 'startVoice'],
  // workspaces
  inviteMember: ['workspaces', 'invite'],
  // telephony
  twilioVoiceWebhook: ['telephony', 'twilioVoice'],
  twilioStatusCallback: ['telephony', 'twilioStatus'],
};

const camel = (text) => text.replace(/[-\s]+(\w)/g, (_, c) => c.toUpperCase());

/** `[resource, method]` of an operation. */
export function placeOf(operationId, tag) {
  if (OVERRIDES[operationId]) return OVERRIDES[operationId];
  const resource = RESOURCE_OF_TAG[tag] ?? camel(tag);
  let method = operationId;
  for (const noun of NOUNS[resource] ?? []) {
    const at = method.indexOf(noun);
    if (at > 0) {
      method = method.slice(0, at) + method.slice(at + noun.length);
      break;
    }
  }
  method = method.replace(/With$/, '');
  method = method.replace(/^get(?=[A-Z]|$)/, 'retrieve');
  return [resource, method.charAt(0).toLowerCase() + method.slice(1)];
}
