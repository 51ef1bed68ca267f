import type { ChatAction } from '../../../../../sdks/typescript/src/index.ts';

// What the engine did during a chat reply, in words: a transfer, the end of the conversation, a
// function called (with its arguments and result), a knowledge-base search.

const short = (value: unknown) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === undefined ? '' : text.length > 200 ? `${text.slice(0, 200)}…` : text;
};

export function describeAction(action: ChatAction): string {
  switch (action.type) {
    case 'transfer_call':
      return `Transferred the call${action.to ? ` to ${action.to}` : ''}${action.reason ? ` (${action.reason})` : ''}`;
    case 'end_call':
      return `Ended the call${action.reason ? ` (${action.reason})` : ''}`;
    case 'function_call':
      return `Called ${action.name ?? 'a function'}(${short(action.arguments ?? {})}) → ${short(action.result)}`;
    case 'search_knowledge_base':
      return `Searched the knowledge base for “${action.query ?? ''}” (${action.results ?? 0} passages)`;
    default:
      return action.type.replaceAll('_', ' ');
  }
}
