import type { RequestOptions } from '../core/core.js';
import type * as M from '../generated/models.js';
import { AuthBase } from '../generated/resources/auth.js';

/** `client.auth`: a login, refresh or logout also updates the client's own tokens. */
export class Auth extends AuthBase {
  /** Logs in: later requests of this client use (and refresh) the tokens; `onTokens` is told. */
  override async login(body: M.LoginBody, options?: RequestOptions): Promise<M.LoginResponse> {
    const pair = await super.login(body, options);
    await this._core.auth.store(pair);
    return pair;
  }

  override async refresh(body: M.RefreshTokenBody, options?: RequestOptions): Promise<M.RefreshTokenResponse> {
    const pair = await super.refresh(body, options);
    await this._core.auth.store(pair);
    return pair;
  }

  /** Ends the session on the server and forgets the tokens. */
  override async logout(options?: RequestOptions): Promise<void> {
    await super.logout(options);
    this._core.auth.clear();
  }
}
