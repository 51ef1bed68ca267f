import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ApiKey } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Dialog, Heading, Modal } from 'react-aria-components';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { dateTime } from '../ui/format.ts';
import { SecretOnce } from '../ui/secret.tsx';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';

// The workspace's API keys: a new key is shown once; revoking asks first and is immediate.

const SCOPES = [
  { value: 'write', label: 'Write: create, read, update and delete' },
  { value: 'read-only', label: 'Read-only: GET only' },
  { value: 'admin', label: 'Admin: write, billing, members, audit log' },
];

function NewKey({ onCreated }: { onCreated(secret: string): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [scope, setScope] = useState('write');
  const create = useMutation({
    mutationFn: () => api.apiKeys.create({ name: name.trim(), scope: scope as ApiKey['scope'] }),
    onSuccess: (key) => {
      onCreated(key.key);
      setName('');
      void queryClient.invalidateQueries();
    },
  });
  const failure = create.error ? describeError(create.error) : undefined;
  return (
    <Form label="New API key" className="form inline" onSubmit={() => create.mutate()}>
      <Field label="Key name" name="name" value={name} onChange={setName} required error={failure?.fields.name} />
      <SelectField label="Scope" name="scope" value={scope} onChange={setScope} options={SCOPES} />
      <Button type="submit" isDisabled={name.trim() === ''} isPending={create.isPending}>
        Create key
      </Button>
      <FormError message={failure && !failure.fields.name ? failure.message : undefined} />
    </Form>
  );
}

function RevokeDialog({ apiKey, onClose }: { apiKey: ApiKey; onClose(): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => api.apiKeys.revoke(apiKey.id),
    onSuccess: () => {
      void queryClient.invalidateQueries();
      onClose();
    },
  });
  return (
    <Modal isOpen isDismissable onOpenChange={(open) => (open ? undefined : onClose())} className="modal">
      <Dialog role="alertdialog" className="dialog">
        <Heading slot="title">Revoke “{apiKey.name}”?</Heading>
        <p>Requests with this key are refused from now on. This cannot be undone.</p>
        <FormError message={revoke.error ? describeError(revoke.error).message : undefined} />
        <div className="actions">
          <Button variant="danger" onPress={() => revoke.mutate()} isPending={revoke.isPending} autoFocus>
            Revoke key
          </Button>
          <Button variant="secondary" onPress={onClose}>
            Cancel
          </Button>
        </div>
      </Dialog>
    </Modal>
  );
}

export function ApiKeysPage() {
  const { api } = useWorkspace();
  const keys = useQuery({ queryKey: useKey('api-keys'), queryFn: async () => (await api.apiKeys.list({ limit: 100 })).data });
  const [secret, setSecret] = useState<string>();
  const [revoking, setRevoking] = useState<ApiKey>();
  return (
    <>
      <PageTitle>API keys</PageTitle>
      {secret ? <SecretOnce title="Your new API key" value={secret} onDismiss={() => setSecret(undefined)} /> : null}
      <NewKey onCreated={setSecret} />
      <QueryView query={keys} isEmpty={(list) => list.length === 0} empty={<Empty title="No API keys yet.">Create one for your backend above.</Empty>}>
        {(list) => (
          <DataTable caption="API keys" columns={['Name', 'Key', 'Scope', 'Last used', 'Status']}>
            {list.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>
                    {key.prefix}…{key.last4}
                  </code>
                </td>
                <td>{key.scope}</td>
                <td>{key.last_used_at ? `${dateTime(key.last_used_at)}${key.last_used_ip ? ` from ${key.last_used_ip}` : ''}` : 'Never'}</td>
                <td>
                  {key.revoked_at ? (
                    `Revoked ${dateTime(key.revoked_at)}`
                  ) : (
                    <Button variant="danger" onPress={() => setRevoking(key)} aria-label={`Revoke ${key.name}`}>
                      Revoke
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
      {revoking ? <RevokeDialog apiKey={revoking} onClose={() => setRevoking(undefined)} /> : null}
    </>
  );
}
