import type { ReactNode } from 'react';
import { Dialog, Heading, Modal } from 'react-aria-components';
import { describeError } from '../api/errors.ts';
import { Button, FormError } from '../ui/form.tsx';

// A question before something that cannot be undone (delete a source, release a number): the
// confirming button has the focus, Escape or Cancel closes it, a refusal is shown inside it.

export function ConfirmDialog(props: { title: string; children: ReactNode; confirmLabel: string; onConfirm(): void; onClose(): void; pending: boolean; error: unknown }) {
  return (
    <Modal isOpen isDismissable onOpenChange={(open) => (open ? undefined : props.onClose())} className="modal">
      <Dialog role="alertdialog" className="dialog">
        <Heading slot="title">{props.title}</Heading>
        {props.children}
        <FormError message={props.error ? describeError(props.error).message : undefined} />
        <div className="actions">
          <Button variant="danger" onPress={props.onConfirm} isPending={props.pending} autoFocus>
            {props.confirmLabel}
          </Button>
          <Button variant="secondary" onPress={props.onClose}>
            Cancel
          </Button>
        </div>
      </Dialog>
    </Modal>
  );
}
