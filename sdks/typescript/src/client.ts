import { type ClientOptions, Core } from './core/core.js';
import type { Tokens } from './core/auth.js';
import { Resources } from './generated/client-base.js';

/**
 * The Voice Agent Platform client: one property per resource (`client.agents.create()`,
 * `client.calls.list()`, `client.voiceSessions.create()` …).
 *
 * ```ts
 * const client = new VoiceAgent({ baseURL, apiKey: process.env.VAP_API_KEY });
 * const client = new VoiceAgent({ baseURL, email, password, onTokens: save });
 * ```
 */
export class VoiceAgent extends Resources {
  private readonly core: Core;

  constructor(options: ClientOptions | Core) {
    const core = options instanceof Core ? options : new Core(options);
    super(core);
    this.core = core;
  }

  /** The same client (credentials and tokens shared) acting in another workspace. */
  withWorkspace(workspaceId: string): VoiceAgent {
    return new VoiceAgent(this.core.with({ workspaceId }));
  }

  /** The current login's tokens, if logged in with email and password. */
  get tokens(): Tokens | undefined {
    return this.core.auth.tokens;
  }
}
