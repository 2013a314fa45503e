/**
 * Customers, most recently active first, with a search over name, key and addresses: the way
 * into a profile when no draft links to it.
 */
import { z } from 'zod';
import { listCustomers } from '../../store/customers.ts';
import type { ConsoleContext } from '../context.ts';
import { readQuery } from '../forms.ts';
import { html, time } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';
import { importFactsForm } from './import-facts.ts';

const LIMIT = 100;
const query = z.object({ q: z.string().trim().max(200).optional() }).loose();

export async function customersPage(c: ConsoleContext): Promise<Response> {
  const { q } = readQuery(c, query);
  const customers = await listCustomers(c.get('runtime').db, q, LIMIT);
  const body = html`
<h1>Customers</h1>
<form method="get" action="/customers" role="search" class="inline-form">
  <div><label for="customer-search">Search by name, address or domain</label>
  <input type="search" id="customer-search" name="q" value="${q ?? ''}"></div>
  <button type="submit">Search</button>
</form>
${
  customers.length === 0
    ? html`<p>${q ? 'No customer matches that search.' : 'No customers yet.'}</p>`
    : html`<div class="table-wrap"><table>
  <caption class="sr-only">Customers${q ? ` matching ${q}` : ''}</caption>
  <thead><tr><th scope="col">Customer</th><th scope="col">Addresses</th><th scope="col">Threads</th><th scope="col">Active facts</th><th scope="col">Updated</th></tr></thead>
  <tbody>${customers.map(
    (e) => html`<tr>
      <td><a href="/customers/${e.id}">${e.name ?? e.key}</a>${e.kind === 'domain' ? html` <span class="badge">domain</span>` : ''}</td>
      <td>${e.addresses.join(', ')}</td>
      <td>${e.threadCount}</td><td>${e.activeFactCount}</td><td>${time(e.updatedAt)}</td>
    </tr>`,
  )}</tbody></table></div>`
}
${importFactsForm(c.get('session'), c.get('runtime').config.knowledge.uploadMaxBytes)}`;
  return c.html(renderPage({ title: 'Customers', section: 'customers', session: c.get('session'), notice: readNotice(c), body }));
}
