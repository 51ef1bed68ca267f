import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Call } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Dialog, Heading, Modal } from 'react-aria-components';
import { describeError } from '../../api/errors.ts';
import { useKey, useWorkspace } from '../../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../../ui/form.tsx';
import { controlsOf } from './call-status.ts';

// A live call's controls: hang up (a queued or ringing call is canceled), confirmed first, and
// transfer a call in progress to a number (empty: the agent's transfer number).

function HangUpDialog({ cancel, pending, confirm, close }: { cancel: boolean; pending: boolean; confirm(): void; close(): void }) {
  return (
    <Modal isOpen isDismissable onOpenChange={(open) => (open ? undefined : close())} className="modal">
      <Dialog role="alertdialog" className="dialog">
        <Heading slot="title">{cancel ? 'Cancel this call?' : 'Hang up this call?'}</Heading>
        <p>{cancel ? 'The call is not placed.' : 'The caller is disconnected at once.'}</p>
        <div className="actions">
          <Button variant="danger" onPress={confirm} isPending={pending} autoFocus>
            {cancel ? 'Cancel the call' : 'Hang up now'}
          </Button>
          <Button variant="secondary" onPress={close}>
            Keep the call
          </Button>
        </div>
      </Dialog>
    </Modal>
  );
}

export function CallControls({ call }: { call: Call }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const callKey = useKey('call', call.id);
  const eventsKey = useKey('call-events', call.id);
  const [to, setTo] = useState('');
  const [confirming, setConfirming] = useState(false);
  const done = (updated: Call) => {
    queryClient.setQueryData(callKey, updated);
    void queryClient.invalidateQueries({ queryKey: eventsKey });
  };
  const hangUp = useMutation({ mutationFn: () => api.calls.hangup(call.id), onSuccess: done, onSettled: () => setConfirming(false) });
  const transfer = useMutation({ mutationFn: () => api.calls.transfer(call.id, to.trim() ? { to: to.trim() } : {}), onSuccess: done });
  const controls = controlsOf(call);
  const failure = [hangUp.error, transfer.error].find(Boolean);
  const described = failure ? describeError(failure) : undefined;
  if (!controls.hangUp && !controls.transfer && !failure) return null;
  return (
    <section aria-labelledby="controls-heading" className="panel">
      <h2 id="controls-heading">Live call</h2>
      <div className="actions">
        {controls.hangUp ? (
          <Button variant="danger" onPress={() => setConfirming(true)} isPending={hangUp.isPending}>
            {controls.hangUp === 'cancel' ? 'Cancel call' : 'Hang up'}
          </Button>
        ) : null}
      </div>
      {controls.transfer ? (
        <Form label="Transfer the call" className="form inline" onSubmit={() => transfer.mutate()}>
          <Field label="Transfer to" name="transfer_to" type="tel" value={to} onChange={setTo} description="E.164; empty: the agent's transfer number." error={described?.fields.to} />
          <Button type="submit" variant="secondary" isPending={transfer.isPending}>
            Transfer
          </Button>
        </Form>
      ) : null}
      <FormError message={described?.message} />
      {confirming ? <HangUpDialog cancel={controls.hangUp === 'cancel'} pending={hangUp.isPending} confirm={() => hangUp.mutate()} close={() => setConfirming(false)} /> : null}
    </section>
  );
}
