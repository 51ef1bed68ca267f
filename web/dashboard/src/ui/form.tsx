import { type FormEvent, type ReactNode, useLayoutEffect, useRef } from 'react';
import { Button as AriaButton, type ButtonProps, FieldError, Input, Label, Text, TextArea, TextField } from 'react-aria-components';

// Form controls: React Aria's (labels, descriptions and errors wired for assistive technology)
// with the dashboard's look; selects are the browser's own <select>, accessible and usable on a
// phone as they are.

type DashboardButtonProps = Omit<ButtonProps, 'isPending'> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'link';
  /** Its request is running: presses are ignored and its form is not submitted, but it stays focusable. */
  isPending?: boolean;
};

/**
 * A button. While its request runs, pass `isPending`, not `isDisabled`: a focused button that turns
 * disabled drops the keyboard focus to the page (Chromium fires no blur; in a dialog, Escape no
 * longer closes it). React Aria's own `isPending` keeps the focus too, but its announcement points
 * at the button by id for 7 s: once the button is gone (a dialog closed, a form replaced) that
 * leaves a nameless role="img" in the page. So pending is done here: aria-disabled (which React
 * Aria does not pass through, hence set on the element) and no press handler; `Form` ignores a
 * submit by a pending button (clicked, or Enter in a field: implicit submission clicks it).
 */
export function Button({ variant = 'primary', className, isPending = false, onPress, type, ...props }: DashboardButtonProps) {
  const ref = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => {
    if (isPending) ref.current?.setAttribute('aria-disabled', 'true');
    else ref.current?.removeAttribute('aria-disabled');
  }, [isPending]);
  return (
    <AriaButton
      {...props}
      ref={ref}
      type={type}
      onPress={isPending ? undefined : onPress}
      data-busy={isPending || undefined}
      className={`btn btn-${variant}${className ? ` ${className}` : ''}`}
    />
  );
}

interface FieldProps {
  label: string;
  value: string;
  onChange(value: string): void;
  name?: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'date' | 'tel';
  description?: ReactNode;
  error?: string;
  required?: boolean;
  autoComplete?: string;
  multiline?: boolean;
  rows?: number;
  min?: number;
  max?: number;
  step?: number | 'any';
  autoFocus?: boolean;
}

export function Field({ label, description, error, multiline, rows, min, max, step, type = 'text', ...props }: FieldProps) {
  return (
    <TextField
      className="field"
      name={props.name}
      value={props.value}
      onChange={props.onChange}
      type={multiline ? undefined : type}
      isRequired={props.required}
      isInvalid={Boolean(error)}
      autoComplete={props.autoComplete}
      autoFocus={props.autoFocus}
      validationBehavior="aria"
    >
      <Label>{label}</Label>
      {multiline ? <TextArea rows={rows ?? 4} /> : <Input min={min} max={max} step={step} />}
      {description ? <Text slot="description" className="hint">{description}</Text> : null}
      <FieldError className="field-error">{error}</FieldError>
    </TextField>
  );
}

export interface Option {
  value: string;
  label: string;
}

export function SelectField(props: { label: string; value: string; onChange(value: string): void; options: Option[]; name?: string; description?: string; error?: string }) {
  const id = `select-${props.name ?? props.label.toLowerCase().replace(/\W+/g, '-')}`;
  const describedBy = [props.description ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select id={id} name={props.name} value={props.value} onChange={(event) => props.onChange(event.target.value)} aria-describedby={describedBy} aria-invalid={props.error ? true : undefined}>
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {props.description ? <span id={`${id}-hint`} className="hint">{props.description}</span> : null}
      {props.error ? <span id={`${id}-error`} className="field-error">{props.error}</span> : null}
    </div>
  );
}

export function CheckboxField(props: { label: string; checked: boolean; onChange(checked: boolean): void; name?: string }) {
  return (
    <label className="check">
      <input type="checkbox" name={props.name} checked={props.checked} onChange={(event) => props.onChange(event.target.checked)} />
      {props.label}
    </label>
  );
}

/** A form whose submit runs `onSubmit` (no page load). */
export function Form({ onSubmit, children, label, className }: { onSubmit(): void; children: ReactNode; label?: string; className?: string }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter;
    if (submitter?.getAttribute('aria-disabled') === 'true') return;
    onSubmit();
  };
  return (
    <form onSubmit={submit} aria-label={label} className={className ?? 'form'} noValidate>
      {children}
    </form>
  );
}

/** A request's failure, announced to screen readers. */
export function FormError({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p role="alert" className="form-error">
      {message}
    </p>
  );
}
