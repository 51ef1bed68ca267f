import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type AddKnowledgeSourceBody, type AddKnowledgeSourceUpload, type KnowledgeSource, toFile } from '@voice-agent-platform/sdk';
import { useRef, useState } from 'react';
import { Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
import { describeError } from '../api/errors.ts';
import { useWorkspace } from '../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { ACCEPTED_FILES, ACCEPTED_FILES_TEXT, fileProblem, textSourceProblems, urlProblem } from './knowledge-base-view.ts';

// Adding a source to a knowledge base: a file (sent as multipart), a web page's address, or
// text. Each form checks what it can before sending and shows the platform's refusal on the
// field it names; the new source appears in the list above with its status.

type AddBody = AddKnowledgeSourceBody | AddKnowledgeSourceUpload;

function useAddSource(baseId: string, onAdded: (source: KnowledgeSource) => void) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: AddBody) => api.knowledgeBases.addSource(baseId, body),
    onSuccess: (source) => {
      void queryClient.invalidateQueries();
      onAdded(source);
    },
  });
}

function Added({ source }: { source: KnowledgeSource | undefined }) {
  return (
    <span role="status" className="hint">
      {source ? `Added “${source.title}”: ${source.status}` : ''}
    </span>
  );
}

function FileForm({ baseId }: { baseId: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [title, setTitle] = useState('');
  const [problem, setProblem] = useState<string>();
  const [added, setAdded] = useState<KnowledgeSource>();
  const add = useAddSource(baseId, (source) => {
    setAdded(source);
    setTitle('');
    if (input.current) input.current.value = '';
  });
  const submit = () => {
    const file = input.current?.files?.[0];
    const found = fileProblem(file);
    setProblem(found);
    if (found || !file) return;
    add.mutate({ file: toFile(file, file.name, file.type || 'application/octet-stream'), ...(title.trim() ? { title: title.trim() } : {}) });
  };
  const failure = add.error ? describeError(add.error) : undefined;
  const fileError = problem ?? failure?.fields.file;
  return (
    <Form label="Upload a file" className="form" onSubmit={submit}>
      <div className="field">
        <label htmlFor="source-file">File to upload</label>
        <input ref={input} id="source-file" name="file" type="file" accept={ACCEPTED_FILES} aria-describedby="source-file-hint source-file-error" aria-invalid={fileError ? true : undefined} onChange={() => setProblem(undefined)} />
        <span id="source-file-hint" className="hint">
          {ACCEPTED_FILES_TEXT}.
        </span>
        <span id="source-file-error" className="field-error">
          {fileError}
        </span>
      </div>
      <Field label="Title (optional)" name="title" value={title} onChange={setTitle} description="Defaults to the file's name." error={failure?.fields.title} />
      <FormError message={failure && !failure.fields.file && !failure.fields.title ? failure.message : undefined} />
      <div className="actions">
        <Button type="submit" isPending={add.isPending}>
          {add.isPending ? 'Uploading…' : 'Upload file'}
        </Button>
        <Added source={added} />
      </div>
    </Form>
  );
}

function TextForm({ baseId }: { baseId: string }) {
  const [draft, setDraft] = useState({ title: '', text: '' });
  const [problems, setProblems] = useState<ReturnType<typeof textSourceProblems>>({});
  const [added, setAdded] = useState<KnowledgeSource>();
  const add = useAddSource(baseId, (source) => {
    setAdded(source);
    setDraft({ title: '', text: '' });
  });
  const submit = () => {
    const found = textSourceProblems(draft);
    setProblems(found);
    if (Object.keys(found).length === 0) add.mutate({ type: 'text', title: draft.title.trim(), text: draft.text });
  };
  const failure = add.error ? describeError(add.error) : undefined;
  return (
    <Form label="Add text" className="form" onSubmit={submit}>
      <Field label="Title" name="title" value={draft.title} onChange={(title) => setDraft({ ...draft, title })} required error={problems.title ?? failure?.fields.title} />
      <Field label="Text to add" name="text" multiline rows={8} value={draft.text} onChange={(text) => setDraft({ ...draft, text })} required error={problems.text ?? failure?.fields.text} />
      <FormError message={failure && !failure.fields.title && !failure.fields.text ? failure.message : undefined} />
      <div className="actions">
        <Button type="submit" isPending={add.isPending}>
          Add text
        </Button>
        <Added source={added} />
      </div>
    </Form>
  );
}

function UrlForm({ baseId }: { baseId: string }) {
  const [url, setUrl] = useState('');
  const [title, setTitle] = useState('');
  const [problem, setProblem] = useState<string>();
  const [added, setAdded] = useState<KnowledgeSource>();
  const add = useAddSource(baseId, (source) => {
    setAdded(source);
    setUrl('');
    setTitle('');
  });
  const submit = () => {
    const found = urlProblem(url);
    setProblem(found);
    if (!found) add.mutate({ type: 'url', url: url.trim(), ...(title.trim() ? { title: title.trim() } : {}) });
  };
  const failure = add.error ? describeError(add.error) : undefined;
  return (
    <Form label="Add a web page" className="form" onSubmit={submit}>
      <Field label="Page address" name="url" type="url" value={url} onChange={setUrl} required description="The page is fetched now; process it again later to pick up changes." error={problem ?? failure?.fields.url} />
      <Field label="Title (optional)" name="title" value={title} onChange={setTitle} description="Defaults to the page's own title." error={failure?.fields.title} />
      <FormError message={failure && !failure.fields.url && !failure.fields.title ? failure.message : undefined} />
      <div className="actions">
        <Button type="submit" isPending={add.isPending}>
          {add.isPending ? 'Fetching…' : 'Add web page'}
        </Button>
        <Added source={added} />
      </div>
    </Form>
  );
}

export function AddSource({ baseId }: { baseId: string }) {
  return (
    <section className="panel" aria-labelledby="add-source-heading">
      <h2 id="add-source-heading">Add a source</h2>
      <Tabs className="tabs">
        <TabList aria-label="Kind of source">
          <Tab id="file">File</Tab>
          <Tab id="url">Web page</Tab>
          <Tab id="text">Text</Tab>
        </TabList>
        <TabPanel id="file">
          <FileForm baseId={baseId} />
        </TabPanel>
        <TabPanel id="url">
          <UrlForm baseId={baseId} />
        </TabPanel>
        <TabPanel id="text">
          <TextForm baseId={baseId} />
        </TabPanel>
      </Tabs>
    </section>
  );
}
