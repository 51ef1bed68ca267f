/*
 * Voice Agent Platform widget. One tag adds it to any page:
 *   <script src="https://<platform>/v1/widgets/<wdg_id>/embed.js" async></script>
 * A floating button opens a panel (in an open shadow root, so the page's styles and the widget's
 * never mix) to chat with the widget's agent, and to talk to it (microphone over the platform's
 * media WebSocket) when the widget allows voice. No dependency. Every text from the network is
 * rendered with textContent: no message can ever run script. When the platform refuses this page
 * (allowed_origins), nothing is added.
 */
(() => {
  const ID_IN_URL = /^(.*)\/v1\/widgets\/(wdg_[0-9a-z]{26})\/embed\.js(?:[?#].*)?$/;
  const script = document.currentScript || Array.from(document.scripts).find((s) => ID_IN_URL.test(s.src));
  const match = script && ID_IN_URL.exec(script.src);
  if (!match) return;
  const base = match[1];
  const widgetId = match[2];
  const loaded = (window.__vapWidgets = window.__vapWidgets || {});
  if (loaded[widgetId]) return;
  loaded[widgetId] = true;
  const api = `${base}/v1/widgets/${widgetId}`;

  const FRAME_SAMPLES = 320; // 20 ms at 16 kHz, the media protocol's frame
  const MAX_MESSAGE = 2000;

  function visitorId() {
    const key = 'vap-visitor';
    try {
      let id = localStorage.getItem(key);
      if (!id || !/^[A-Za-z0-9_.:-]{1,100}$/.test(id)) {
        id = `v_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
        localStorage.setItem(key, id);
      }
      return id;
    } catch {
      return undefined; // storage blocked (a sandboxed or privacy-restricted page)
    }
  }

  /** An element with attributes and children (strings become text nodes, never HTML). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === false || value === undefined || value === null) continue;
      node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children) node.append(child);
    return node;
  }

  function icon(path) {
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('aria-hidden', 'true');
    svg.setAttribute('focusable', 'false');
    const p = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    p.setAttribute('d', path);
    svg.append(p);
    return svg;
  }
  const ICON_CHAT = 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z';
  const ICON_CLOSE = 'M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6 10.6 12 5 6.4z';
  const ICON_SEND = 'M3 20.5 21 12 3 3.5 3 10l12 2-12 2z';
  const ICON_MIC = 'M12 15a3 3 0 0 0 3-3V6a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.9V21h2v-2.1a7 7 0 0 0 6-6.9z';

  const CSS = `
:host { all: initial; }
* { box-sizing: border-box; }
.root { --p: #4f46e5; position: fixed; bottom: 20px; right: 20px; z-index: 2147483000; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #111827; }
.root.left { right: auto; left: 20px; }
button { font: inherit; cursor: pointer; }
button:focus-visible, textarea:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
svg { width: 24px; height: 24px; fill: currentColor; }
.launcher { width: 56px; height: 56px; border-radius: 50%; border: 0; background: var(--p); color: #fff; display: grid; place-items: center; box-shadow: 0 6px 20px rgba(0,0,0,.22); }
.launcher:hover { filter: brightness(1.08); }
.panel { position: absolute; bottom: 72px; right: 0; width: 370px; height: min(560px, calc(100vh - 120px)); display: flex; flex-direction: column; background: #fff; border-radius: 16px; overflow: hidden; box-shadow: 0 16px 48px rgba(0,0,0,.25); border: 1px solid rgba(0,0,0,.08); }
.left .panel { right: auto; left: 0; }
.panel[hidden] { display: none; }
.head { display: flex; align-items: center; gap: 8px; padding: 14px 12px 14px 18px; background: var(--p); color: #fff; }
.head h2 { flex: 1; margin: 0; font-size: 16px; font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.icon { width: 36px; height: 36px; border: 0; border-radius: 8px; background: transparent; color: inherit; display: grid; place-items: center; }
.icon:hover { background: rgba(255,255,255,.16); }
.log { flex: 1; overflow-y: auto; padding: 16px; display: flex; flex-direction: column; gap: 10px; background: #f8fafc; }
.msg { max-width: 85%; padding: 9px 13px; border-radius: 14px; white-space: pre-wrap; overflow-wrap: anywhere; }
.agent { align-self: flex-start; background: #fff; border: 1px solid #e5e7eb; border-bottom-left-radius: 4px; }
.user { align-self: flex-end; background: var(--p); color: #fff; border-bottom-right-radius: 4px; }
.msg[data-source="voice"]::before { content: "Voice"; display: block; margin-bottom: 2px; font-size: 11px; font-weight: 600; letter-spacing: .04em; text-transform: uppercase; opacity: .65; }
.note { align-self: center; font-size: 13px; color: #6b7280; text-align: center; }
.typing { color: #6b7280; font-style: italic; }
.voice { display: flex; align-items: center; gap: 10px; padding: 10px 14px; border-top: 1px solid #e5e7eb; }
.voice .status { flex: 1; font-size: 13px; color: #4b5563; }
.call { display: inline-flex; align-items: center; gap: 6px; border: 1px solid var(--p); color: var(--p); background: #fff; border-radius: 999px; padding: 7px 14px; }
.call svg { width: 18px; height: 18px; }
.call[aria-pressed="true"] { background: #dc2626; border-color: #dc2626; color: #fff; }
.call:disabled { opacity: .6; cursor: default; }
form { display: flex; align-items: flex-end; gap: 8px; padding: 10px 12px; border-top: 1px solid #e5e7eb; background: #fff; }
textarea { flex: 1; resize: none; min-height: 42px; max-height: 120px; padding: 10px 12px; border: 1px solid #d1d5db; border-radius: 12px; font: inherit; color: inherit; background: #fff; }
.send { width: 42px; height: 42px; border: 0; border-radius: 12px; background: var(--p); color: #fff; display: grid; place-items: center; }
.send:disabled { opacity: .5; cursor: default; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 480px) {
  .root { bottom: 12px; right: 12px; }
  .root.left { left: 12px; }
  .panel { position: fixed; left: 8px; right: 8px; bottom: 80px; width: auto; height: calc(100vh - 96px); }
  .left .panel { left: 8px; }
}
@media (prefers-reduced-motion: no-preference) { .panel { animation: rise .16s ease-out; } @keyframes rise { from { opacity: 0; transform: translateY(8px); } } }
`;

  async function start() {
    let config;
    try {
      const res = await fetch(`${api}/config`, { credentials: 'omit' });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      config = await res.json();
    } catch (error) {
      console.warn(`[widget ${widgetId}] not shown: the platform refused this page or could not be reached (${error.message})`);
      return;
    }
    render(config);
  }

  function render(config) {
    const title = String(config.theme?.title || config.agent_name || 'Chat');
    const color = /^#[0-9a-fA-F]{6}$/.test(config.theme?.primary_color) ? config.theme.primary_color : '#4f46e5';
    const hasChat = config.mode !== 'voice';
    const hasVoice = config.mode !== 'chat';
    const visitor = visitorId();
    let conversationId;

    const host = el('div', { 'data-vap-widget': widgetId, 'data-state': 'ready', 'data-frames-received': '0', 'data-frames-played': '0' });
    const shadow = host.attachShadow({ mode: 'open' });
    const panelId = `vap-panel-${widgetId}`;
    const launcher = el('button', { class: 'launcher', type: 'button', 'aria-label': `Open chat: ${title}`, 'aria-expanded': 'false', 'aria-controls': panelId }, icon(ICON_CHAT));
    const close = el('button', { class: 'icon', type: 'button', 'aria-label': 'Close chat' }, icon(ICON_CLOSE));
    const heading = el('h2', { id: `${panelId}-title` }, title);
    const log = el('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
    const panel = el('section', { class: 'panel', id: panelId, role: 'dialog', 'aria-labelledby': heading.id, hidden: true }, el('div', { class: 'head' }, heading, close), log);
    const root = el('div', { class: `root${config.theme?.position === 'bottom-left' ? ' left' : ''}`, style: `--p: ${color}` }, panel, launcher);
    shadow.append(el('style', {}, CSS), root);

    function say(role, text, source) {
      const node = el('div', { class: `msg ${role}`, 'data-source': source });
      node.textContent = text; // never HTML
      log.append(node);
      log.scrollTop = log.scrollHeight;
      return node;
    }
    if (config.greeting) say('agent', config.greeting);

    function setOpen(open) {
      panel.hidden = !open;
      launcher.setAttribute('aria-expanded', String(open));
      launcher.setAttribute('aria-label', `${open ? 'Close' : 'Open'} chat: ${title}`);
      if (open) (input || callButton).focus();
      else launcher.focus();
    }
    launcher.addEventListener('click', () => setOpen(panel.hidden));
    close.addEventListener('click', () => setOpen(false));
    panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') setOpen(false);
    });

    let input;
    if (hasChat) {
      input = el('textarea', { id: `${panelId}-input`, rows: 1, maxlength: MAX_MESSAGE, placeholder: 'Type a message…', autocomplete: 'off' });
      const send = el('button', { class: 'send', type: 'submit', 'aria-label': 'Send message' }, icon(ICON_SEND));
      const form = el('form', { 'aria-label': 'Send a message' }, el('label', { class: 'sr', for: input.id }, 'Message'), input, send);
      panel.append(form);
      input.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
          event.preventDefault();
          form.requestSubmit();
        }
      });
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        const message = input.value.trim().slice(0, MAX_MESSAGE);
        if (!message || send.disabled) return;
        input.value = '';
        say('user', message);
        send.disabled = true;
        const typing = say('agent typing', '…');
        typing.setAttribute('aria-label', 'The agent is typing');
        try {
          const res = await fetch(`${api}/chat`, {
            method: 'POST',
            credentials: 'omit',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ message, conversation_id: conversationId, visitor_id: visitor }),
          });
          typing.remove();
          if (res.status === 429) return void say('note', 'Too many messages for now. Please try again in a minute.');
          if (!res.ok) {
            if (res.status === 404 || res.status === 409) conversationId = undefined;
            return void say('note', 'Sorry, the message could not be sent. Please try again.');
          }
          const body = await res.json();
          conversationId = body.ended ? undefined : body.conversation_id;
          say('agent', String(body.reply ?? ''));
        } catch {
          typing.remove();
          say('note', 'The connection failed. Please try again.');
        } finally {
          send.disabled = false;
          input.focus();
        }
      });
    }

    let callButton;
    if (hasVoice) {
      const status = el('span', { class: 'status', role: 'status' }, 'Talk to us with your microphone');
      callButton = el('button', { class: 'call', type: 'button', 'aria-pressed': 'false' }, icon(ICON_MIC), el('span', {}, 'Start voice call'));
      panel.append(el('div', { class: 'voice' }, status, callButton));
      const voice = createVoice({ host, status, say, visitor });
      callButton.addEventListener('click', async () => {
        const label = callButton.querySelector('span');
        if (voice.active()) return voice.stop('You ended the call.');
        callButton.disabled = true;
        const started = await voice.start(() => {
          callButton.setAttribute('aria-pressed', 'false');
          label.textContent = 'Start voice call';
        });
        callButton.disabled = false;
        if (started) {
          callButton.setAttribute('aria-pressed', 'true');
          label.textContent = 'End voice call';
        }
      });
    }

    document.body.append(host);
  }

  // The voice call: microphone → AudioWorklet (PCM16, 16 kHz, 20 ms frames) → the media WebSocket,
  // and the agent's PCM16 frames → the same worklet's output. The host element counts frames
  // received and played (data-frames-received, data-frames-played).
  const WORKLET = `
class VapPcm extends AudioWorkletProcessor {
  constructor() {
    super();
    this.queue = []; this.offset = 0; this.mic = new Int16Array(${FRAME_SAMPLES}); this.n = 0; this.played = 0; this.stopped = false;
    this.port.onmessage = ({ data }) => {
      if (data.type === 'play') this.queue.push(new Int16Array(data.pcm));
      else if (data.type === 'clear') { this.queue = []; this.offset = 0; }
      else if (data.type === 'stop') this.stopped = true;
    };
  }
  process(inputs, outputs) {
    const input = inputs[0] && inputs[0][0];
    if (input) for (let i = 0; i < input.length; i++) {
      const s = Math.max(-1, Math.min(1, input[i]));
      this.mic[this.n++] = s < 0 ? s * 32768 : s * 32767;
      if (this.n === ${FRAME_SAMPLES}) { this.port.postMessage({ type: 'mic', pcm: this.mic.buffer }, [this.mic.buffer]); this.mic = new Int16Array(${FRAME_SAMPLES}); this.n = 0; }
    }
    const out = outputs[0][0];
    let i = 0;
    while (i < out.length && this.queue.length) {
      const frame = this.queue[0];
      const take = Math.min(out.length - i, frame.length - this.offset);
      for (let k = 0; k < take; k++) out[i + k] = frame[this.offset + k] / 32768;
      i += take; this.offset += take; this.played += take;
      if (this.offset >= frame.length) { this.queue.shift(); this.offset = 0; }
    }
    out.fill(0, i);
    if (this.played >= ${FRAME_SAMPLES}) { const frames = Math.floor(this.played / ${FRAME_SAMPLES}); this.played -= frames * ${FRAME_SAMPLES}; this.port.postMessage({ type: 'played', frames }); }
    return !this.stopped;
  }
}
registerProcessor('vap-pcm', VapPcm);
`;

  function createVoice({ host, status, say, visitor }) {
    let call = null;
    const count = (name, add) => {
      host.dataset[name] = String(Number(host.dataset[name] || 0) + add);
    };

    function stop(message) {
      if (!call) return;
      const { ws, ctx, mic, node, onEnd } = call;
      call = null;
      try {
        node.port.postMessage({ type: 'stop' });
        ws.close(1000);
      } catch {}
      for (const track of mic.getTracks()) track.stop();
      ctx.close().catch(() => {});
      host.dataset.voice = 'ended';
      status.textContent = message || 'The call has ended.';
      onEnd();
    }

    async function start(onEnd) {
      if (!navigator.mediaDevices?.getUserMedia || typeof AudioWorkletNode === 'undefined') {
        status.textContent = 'Voice calls need a browser with microphone access.';
        return false;
      }
      status.textContent = 'Connecting…';
      host.dataset.voice = 'connecting';
      let mic;
      let ctx;
      try {
        // The microphone first: no session (and no cost) when the visitor refuses it.
        mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
        ctx = new AudioContext({ sampleRate: 16000 });
        const workletUrl = URL.createObjectURL(new Blob([WORKLET], { type: 'application/javascript' }));
        await ctx.audioWorklet.addModule(workletUrl);
        URL.revokeObjectURL(workletUrl);
        const res = await fetch(`${api}/voice`, { method: 'POST', credentials: 'omit', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ visitor_id: visitor }) });
        if (!res.ok) throw new Error(res.status === 429 ? 'Too many calls for now; try again in a minute.' : 'The call could not be started.');
        const session = await res.json();
        const node = new AudioWorkletNode(ctx, 'vap-pcm', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
        ctx.createMediaStreamSource(mic).connect(node);
        node.connect(ctx.destination);
        await ctx.resume();
        const ws = new WebSocket(`${session.url}?token=${encodeURIComponent(session.token)}`);
        ws.binaryType = 'arraybuffer';
        call = { ws, ctx, mic, node, onEnd };
        node.port.onmessage = ({ data }) => {
          if (data.type === 'mic' && ws.readyState === WebSocket.OPEN) ws.send(data.pcm);
          else if (data.type === 'played') count('framesPlayed', data.frames);
        };
        ws.onopen = () => {
          host.dataset.voice = 'live';
          status.textContent = 'Connected: speak when you are ready.';
        };
        ws.onmessage = ({ data }) => {
          if (typeof data !== 'string') {
            count('framesReceived', Math.max(1, Math.round(data.byteLength / (FRAME_SAMPLES * 2))));
            node.port.postMessage({ type: 'play', pcm: data }, [data]);
            return;
          }
          let msg;
          try {
            msg = JSON.parse(data);
          } catch {
            return;
          }
          if (msg.type === 'clear') node.port.postMessage({ type: 'clear' });
          else if (msg.type === 'transcript' && msg.final !== false && typeof msg.text === 'string') say(msg.role === 'user' ? 'user' : 'agent', msg.text, 'voice');
          else if (msg.type === 'end') stop('The call has ended.');
        };
        ws.onerror = () => stop('The call was interrupted.');
        ws.onclose = () => stop();
        return true;
      } catch (error) {
        for (const track of mic?.getTracks() || []) track.stop();
        ctx?.close().catch(() => {});
        host.dataset.voice = 'failed';
        status.textContent = error.name === 'NotAllowedError' ? 'Microphone access was refused.' : error.message || 'The call could not be started.';
        return false;
      }
    }

    return { start, stop, active: () => call !== null };
  }

  if (document.body) start();
  else document.addEventListener('DOMContentLoaded', start, { once: true });
})();
