/**
 * HTML that escapes by default. Every value interpolated into `html`...`` is escaped unless it is
 * itself the result of `html` (already safe); mail content can therefore never become markup by
 * accident. There is deliberately no way to mark an arbitrary runtime string as safe.
 */

import { formatBytes } from '../mail/attachments.ts';

const SAFE = Symbol('safe-html');

export interface SafeHtml {
  readonly [SAFE]: true;
  readonly value: string;
}

export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

function isSafe(value: unknown): value is SafeHtml {
  return typeof value === 'object' && value !== null && SAFE in value;
}

function render(value: HtmlValue): string {
  // false/null/undefined render nothing, so `cond && html`...`` reads naturally in templates.
  if (value === null || value === undefined || value === false || value === true) return '';
  if (isSafe(value)) return value.value;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(String(value));
}

function safe(value: string): SafeHtml {
  return { [SAFE]: true, value };
}

/** Tagged template: the literal parts are trusted markup, every interpolation is escaped. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return safe(out);
}

/** A date for people, with the machine-readable value in `<time datetime>`. */
export function time(date: Date | null | undefined): SafeHtml {
  if (!date) return html`<span class="muted">never</span>`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** A size for people ("1.2 MB"), the exact byte count in `<data value>` and on hover. */
export function size(bytes: number): SafeHtml {
  return html`<data class="size" value="${bytes}" title="${bytes.toLocaleString('en-US')} bytes">${formatBytes(bytes)}</data>`;
}

/** Mail text, shown literally with its line breaks; long lines wrap (see the stylesheet). */
export function mailText(text: string): SafeHtml {
  return html`<pre class="mail">${text}</pre>`;
}

export function list(items: readonly string[], empty = 'none'): SafeHtml {
  if (items.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<ul>${items.map((item) => html`<li>${item}</li>`)}</ul>`;
}

export type HeadingLevel = 2 | 3 | 4;

/** A heading whose level depends on where a component is placed (keeps the outline valid). */
export function heading(level: HeadingLevel, text: string, id?: string): SafeHtml {
  const idAttr = id ? html` id="${id}"` : '';
  switch (level) {
    case 2:
      return html`<h2${idAttr}>${text}</h2>`;
    case 3:
      return html`<h3${idAttr}>${text}</h3>`;
    case 4:
      return html`<h4${idAttr}>${text}</h4>`;
  }
}
