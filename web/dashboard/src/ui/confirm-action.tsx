import type { UseMutationResult } from '@tanstack/react-query';
import { Dialog, Heading, Modal } from 'react-aria-components';
import { describeError } from '../api/errors.ts';
import { Button, FormError } from './form.tsx';

// An action that cannot be undone (cancel a campaign, delete a widget …), asked first in an alert
// dialog: Escape or Keep closes it, the confirm button runs the mutation and closes on success.

export function ConfirmAction<T>(props: { title: string; body: string; confirmLabel: string; mutation: UseMutationResult<T, Error, void>; onClose(): void }) {
  const { mutation, onClose } = props;
  return (
    <Modal isOpen isDismissable onOpenChange={(open) => (open ? undefined : onClose())} className="modal">
      <Dialog role="alertdialog" className="dialog">
        <Heading slot="title">{props.title}</Heading>
        <p>{props.body}</p>
        <FormError message={mutation.error ? describeError(mutation.error).message : undefined} />
        <div className="actions">
          <Button variant="danger" onPress={() => mutation.mutate(undefined, { onSuccess: onClose })} isPending={mutation.isPending} autoFocus>
            {props.confirmLabel}
          </Button>
          <Button variant="secondary" onPress={onClose}>
            Keep it
          </Button>
        </div>
      </Dialog>
    </Modal>
  );
}
