import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { describeError } from '../api/errors.ts';
import { Button } from './form.tsx';

// Every page's three states besides its content: loading, empty and failed (with a retry).

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  return (
    <div className="state state-error" role="alert">
      <p>
        <strong>Could not load this.</strong> {describeError(error).message}
      </p>
      {retry ? (
        <Button variant="secondary" onPress={retry}>
          Try again
        </Button>
      ) : null}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

/** A query's loading and error states, then `children(data)`; `empty` when `isEmpty(data)`. */
export function QueryView<T>(props: { query: UseQueryResult<T>; children(data: T): ReactNode; isEmpty?: (data: T) => boolean; empty?: ReactNode; loadingLabel?: string }) {
  const { query } = props;
  if (query.isPending) return <Loading label={props.loadingLabel} />;
  if (query.isError) return <ErrorState error={query.error} retry={() => void query.refetch()} />;
  if (props.isEmpty?.(query.data)) return <>{props.empty}</>;
  return <>{props.children(query.data)}</>;
}
