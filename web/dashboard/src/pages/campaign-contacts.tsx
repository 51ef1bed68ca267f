import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Campaign, CampaignUploadResult } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { saveFile } from '../ui/download.ts';
import { Button, Form, FormError } from '../ui/form.tsx';
import { label } from '../ui/format.ts';
import { Empty, QueryView } from '../ui/states.tsx';
import { versionOf } from './campaign-progress.ts';

// A campaign's contacts: the CSV upload (its rejected rows shown with their reasons), the list
// as the dialer works through it, and the results CSV.

function UploadAnswer({ answer }: { answer: CampaignUploadResult }) {
  return (
    <div className="upload-answer" role="status">
      <p>
        <strong>{answer.accepted}</strong> {answer.accepted === 1 ? 'contact' : 'contacts'} added · {answer.duplicates} duplicate{answer.duplicates === 1 ? '' : 's'} skipped · {answer.skipped_dnc} on the do-not-call list · {answer.rejected.length} rejected
      </p>
      {answer.rejected.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption>Rejected rows</caption>
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {answer.rejected.map((row) => (
                <tr key={row.row}>
                  <td>{row.row}</td>
                  <td>{row.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

export function UploadContacts({ campaign }: { campaign: Campaign }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File>();
  const upload = useMutation({
    mutationFn: (csv: File) => api.campaigns.upload(campaign.id, csv),
    onSuccess: () => void queryClient.invalidateQueries(),
  });
  return (
    <section className="panel" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Upload contacts</h2>
      <p className="hint">
        A CSV with a header row: a <code>phone</code> column (or <code>phone_number</code>, <code>number</code>, <code>to</code>), an optional <code>timezone</code>; every other column becomes a call variable. A second upload adds to the first.
      </p>
      <Form label="Upload contacts" className="form inline" onSubmit={() => file && upload.mutate(file)}>
        <div className="field">
          <label htmlFor="contacts-file">Contacts CSV</label>
          <input id="contacts-file" type="file" accept=".csv,text/csv" onChange={(event) => setFile(event.target.files?.[0])} />
        </div>
        <Button type="submit" isDisabled={!file} isPending={upload.isPending}>
          {upload.isPending ? 'Uploading…' : 'Upload'}
        </Button>
      </Form>
      <FormError message={upload.error ? describeError(upload.error).message : undefined} />
      {upload.data ? <UploadAnswer answer={upload.data} /> : null}
    </section>
  );
}

export function ContactList({ campaign }: { campaign: Campaign }) {
  const { api } = useWorkspace();
  const contacts = useQuery({
    // Fetched again as the (polled) campaign's counts move, the last list kept meanwhile.
    queryKey: useKey('campaign-contacts', campaign.id, versionOf(campaign)),
    queryFn: async () => await api.campaigns.listContacts(campaign.id, { limit: 100 }),
    placeholderData: keepPreviousData,
  });
  return (
    <QueryView query={contacts} isEmpty={(page) => page.data.length === 0} empty={<Empty title="No contacts yet.">Upload a CSV above.</Empty>}>
      {(page) => (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Contacts</caption>
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Phone</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Latest call</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((contact) => (
                <tr key={contact.id}>
                  <td>{contact.row}</td>
                  <td>{contact.phone}</td>
                  <td>
                    <span className={`badge badge-${contact.status}`}>{label(contact.status)}</span>
                  </td>
                  <td>{contact.attempts}</td>
                  <td>{contact.call_id ? <Link href={`/calls/${contact.call_id}`}>Open the call</Link> : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {page.has_more ? <p className="hint">The first 100 contacts; download the results for them all.</p> : null}
        </div>
      )}
    </QueryView>
  );
}

export function ResultsDownload({ campaign }: { campaign: Campaign }) {
  const { api } = useWorkspace();
  const download = useMutation({
    mutationFn: async () => saveFile(await (await api.campaigns.results(campaign.id)).bytes(), `campaign-${campaign.id}-results.csv`, 'text/csv'),
  });
  return (
    <>
      <Button variant="secondary" onPress={() => download.mutate()} isDisabled={campaign.stats.total === 0} isPending={download.isPending}>
        {download.isPending ? 'Downloading…' : 'Download results CSV'}
      </Button>
      <FormError message={download.error ? describeError(download.error).message : undefined} />
    </>
  );
}
