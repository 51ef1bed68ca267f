import type { FormEvent, ReactNode } from 'react';
import { Button as AriaButton, type ButtonProps, FieldError, Input, Label, Text, TextArea, TextField } from 'react-aria-components';

// Form controls: React Aria's (labels, descriptions and errors wired for assistive technology)
// with the dashboard's look; selects are the browser's own <select>, accessible and usable on a
// phone as they are.

export function Button({ variant = 'primary', className, ...props }: ButtonProps & { variant?: 'primary' | 'secondary' | 'danger' | 'link' }) {
  return <AriaButton {...props} className={`btn btn-${variant}${className ? ` ${className}` : ''}`} />;
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
  const submit = (event: FormEvent) => {
    event.preventDefault();
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
