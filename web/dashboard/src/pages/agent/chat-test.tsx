import { useMutation } from '@tanstack/react-query';
import type { ChatReply } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../../api/errors.ts';
import { useWorkspace } from '../../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../../ui/form.tsx';
import { describeAction } from './chat-actions.ts';

// Chatting with the saved agent by text (POST /v1/agents/{id}/chat): the same engine, knowledge
// and functions as a call; the conversation goes on until "Start over".

interface Message {
  id: number;
  from: 'you' | 'agent';
  text: string;
  actions: string[];
}

/** `variables` undefined: the panel's variables are not valid JSON yet (nothing is sent). */
export function ChatTest({ agentId, variables }: { agentId: string; variables: Record<string, string> | undefined }) {
  const { api } = useWorkspace();
  const [messages, setMessages] = useState<Message[]>([]);
  const [conversation, setConversation] = useState<ChatReply>();
  const [text, setText] = useState('');
  const send = useMutation({
    mutationFn: (message: string) => api.agents.chat(agentId, { message, variables, ...(conversation ? { conversation_id: conversation.conversation_id } : {}) }),
    onSuccess: (reply) => {
      setConversation(reply);
      setMessages((list) => [...list, { id: list.length, from: 'agent', text: reply.reply, actions: reply.actions.map(describeAction) }]);
    },
  });
  const submit = () => {
    const message = text.trim();
    if (message === '' || send.isPending || !variables) return;
    setMessages((list) => [...list, { id: list.length, from: 'you', text: message, actions: [] }]);
    setText('');
    send.mutate(message);
  };
  const restart = () => {
    setMessages([]);
    setConversation(undefined);
    send.reset();
  };
  return (
    <section aria-labelledby="chat-heading" className="test-part">
      <h3 id="chat-heading">Chat</h3>
      {messages.length === 0 ? <p className="hint">Write to the agent to see how it answers.</p> : null}
      <ol className="chat-log" aria-live="polite" aria-label="Conversation">
        {messages.map((m) => (
          <li key={m.id} className={`chat-${m.from}`}>
            <strong>{m.from === 'you' ? 'You' : 'Agent'}:</strong> {m.text}
            {m.actions.map((action) => (
              <span key={action} className="chat-action">
                {action}
              </span>
            ))}
          </li>
        ))}
      </ol>
      {conversation?.ended ? <p role="status">The agent ended the conversation.</p> : null}
      <Form label="Chat with the agent" className="form inline" onSubmit={submit}>
        <Field label="Message to the agent" name="chat_message" value={text} onChange={setText} />
        <Button type="submit" isDisabled={text.trim() === '' || conversation?.ended === true || !variables} isPending={send.isPending}>
          {send.isPending ? 'Sending…' : 'Send'}
        </Button>
        <Button variant="secondary" onPress={restart} isDisabled={messages.length === 0}>
          Start over
        </Button>
      </Form>
      <FormError message={send.error ? describeError(send.error).message : undefined} />
    </section>
  );
}
