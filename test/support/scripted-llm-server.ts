/**
 * An OpenAI-compatible HTTP server on loopback whose answers are scripted by the test.
 *
 * The product's real `openai` client talks to it over HTTP (`baseURL: server.url`), so request
 * building, retries, timeouts and `chat.completions.parse` all run for real. Every request to the
 * completions endpoint is recorded; answers come from a FIFO queue (`enqueue`) and, once the queue
 * is empty, from a fallback responder (default: a 500 saying there was no scripted response).
 *
 * Non-streaming only. Zero added latency unless a `delay` response is scripted.
 *
 * `/v1/embeddings` answers with deterministic vectors (test/support/scripted-embeddings.ts), a
 * function of each input text and the model; `enqueueEmbeddings` scripts failures (a status,
 * a hang) for the next embeddings requests, which are recorded apart in `embeddingRequests`.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Arrivals } from './arrivals.ts';
import { scriptedEmbedding } from './scripted-embeddings.ts';

export interface ChatMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  response_format?: {
    type: string;
    json_schema?: { name?: string; strict?: boolean; schema?: unknown; [key: string]: unknown };
  };
  stream?: boolean;
  [key: string]: unknown;
}

export interface RecordedRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: ChatRequestBody;
  /** `response_format.json_schema.name`, or null when the request had no JSON-schema format. */
  schemaName: string | null;
  /** `Date.now()` when the request body had been fully received. */
  receivedAt: number;
}

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** `finishReason` defaults to 'stop'; 'length' or 'content_filter' make `parse` throw the SDK's finish-reason errors. */
export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

export type ScriptedResponse =
  /** Assistant content is `JSON.stringify(content)`. */
  | { kind: 'json'; content: unknown; usage?: ScriptedUsage; finishReason?: FinishReason }
  /** Assistant content is sent verbatim (e.g. malformed JSON). */
  | { kind: 'text'; content: string; usage?: ScriptedUsage; finishReason?: FinishReason }
  /**
   * Any HTTP status. Without `body`, an OpenAI-shaped error body is sent (or, for 2xx, `{}`);
   * a string body is sent as is, anything else as JSON.
   */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Never answers, until the client gives up or the server closes. */
  | { kind: 'hang' }
  | { kind: 'delay'; ms: number; then: ScriptedResponse };

/** `index` is the 0-based position of the request in `requests` (since the last `reset`). */
export type Responder = (request: RecordedRequest, index: number) => ScriptedResponse | Promise<ScriptedResponse>;

export interface ScriptedLlmServer {
  /** Base URL for the openai client, e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  requests: RecordedRequest[];
  /** Every embeddings request: the model and its inputs. */
  embeddingRequests: Array<{ model: string; input: string[] }>;
  /** Answers for the next embeddings requests (a status, a hang, a delay); afterwards, deterministic vectors again. */
  enqueueEmbeddings(...responses: ScriptedResponse[]): void;
  /** Queue responses consumed in order; when the queue is empty, the fallback responder answers. */
  enqueue(...responses: ScriptedResponse[]): void;
  setFallback(responder: Responder): void;
  /** Resolves when `count` requests in total have been received (event-driven, no polling sleeps). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Clears recorded requests and the queue (the fallback stays). */
  reset(): void;
  /** Closes the server and any open (including hanging) sockets promptly. */
  close(): Promise<void>;
}

const NO_SCRIPT: Responder = () => ({
  kind: 'status',
  status: 500,
  body: errorBody(500, 'Scripted LLM server: no scripted response for this request (queue empty, no fallback set)'),
});

const ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  408: { type: 'timeout_error', code: null },
  409: { type: 'invalid_request_error', code: null },
  422: { type: 'invalid_request_error', code: null },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

function errorBody(status: number, message?: string): { error: { message: string; type: string; param: null; code: string | null } } {
  const known =
    ERROR_TYPES[status] ?? (status >= 500 ? { type: 'server_error', code: null } : { type: 'invalid_request_error', code: null });
  return {
    error: {
      message: message ?? `Scripted error response with status ${status}`,
      type: known.type,
      param: null,
      code: known.code,
    },
  };
}

function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function promptChars(body: ChatRequestBody): number {
  let chars = 0;
  for (const message of body.messages) {
    const content = message.content;
    if (typeof content === 'string') chars += content.length;
    else if (content !== undefined && content !== null) chars += JSON.stringify(content).length;
  }
  return chars;
}

function isChatRequestBody(value: unknown): value is ChatRequestBody {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record['model'] === 'string' && Array.isArray(record['messages']);
}

let completionCounter = 0;

export async function startScriptedLlmServer(options?: { fallback?: Responder }): Promise<ScriptedLlmServer> {
  const arrivals = new Arrivals<RecordedRequest>('Scripted LLM server', 'request(s)');
  const requests = arrivals.items;
  const queue: ScriptedResponse[] = [];
  let fallback: Responder = options?.fallback ?? NO_SCRIPT;
  let closed = false;
  const timers = new Set<NodeJS.Timeout>();

  function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.destroyed || res.writableEnded) return;
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      'x-request-id': `req_${randomBytes(8).toString('hex')}`,
      ...headers,
    });
    res.end(payload);
  }

  function completion(request: RecordedRequest, content: string, usage: ScriptedUsage | undefined, finishReason: FinishReason): unknown {
    const prompt = usage?.prompt_tokens ?? estimateTokens(promptChars(request.body));
    const completionTokens = usage?.completion_tokens ?? estimateTokens(content.length);
    completionCounter += 1;
    return {
      id: `chatcmpl-scripted${completionCounter.toString(36)}${randomBytes(6).toString('hex')}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: request.body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null, annotations: [] },
          finish_reason: finishReason,
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens },
      system_fingerprint: 'fp_scripted',
    };
  }

  function respond(res: http.ServerResponse, request: RecordedRequest, scripted: ScriptedResponse): void {
    if (closed || res.destroyed) return;
    switch (scripted.kind) {
      case 'json':
        sendJson(res, 200, completion(request, JSON.stringify(scripted.content), scripted.usage, scripted.finishReason ?? 'stop'));
        return;
      case 'text':
        sendJson(res, 200, completion(request, scripted.content, scripted.usage, scripted.finishReason ?? 'stop'));
        return;
      case 'status': {
        const body = scripted.body ?? (scripted.status >= 200 && scripted.status < 300 ? {} : errorBody(scripted.status));
        sendJson(res, scripted.status, body, scripted.headers);
        return;
      }
      case 'hang':
        // Keep the socket open; close() destroys it, or the client aborts it.
        return;
      case 'delay': {
        const timer = setTimeout(() => {
          timers.delete(timer);
          respond(res, request, scripted.then);
        }, scripted.ms);
        timers.add(timer);
        res.once('close', () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
        return;
      }
    }
  }

  async function handleCompletion(req: http.IncomingMessage, res: http.ServerResponse, path: string, raw: Buffer): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      sendJson(res, 400, errorBody(400, 'Request body is not valid JSON'));
      return;
    }
    if (!isChatRequestBody(parsed)) {
      sendJson(res, 400, errorBody(400, 'Request body needs a string `model` and an array `messages`'));
      return;
    }
    const schemaName = parsed.response_format?.json_schema?.name;
    const request: RecordedRequest = {
      path,
      headers: { ...req.headers },
      body: parsed,
      schemaName: typeof schemaName === 'string' ? schemaName : null,
      receivedAt: Date.now(),
    };
    const index = requests.length;
    arrivals.push(request);

    if (parsed.stream === true) {
      sendJson(res, 400, errorBody(400, 'Scripted LLM server does not support stream: true'));
      return;
    }

    let scripted: ScriptedResponse;
    const queued = queue.shift();
    if (queued !== undefined) {
      scripted = queued;
    } else {
      try {
        scripted = await fallback(request, index);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        scripted = { kind: 'status', status: 500, body: errorBody(500, `Scripted LLM fallback threw: ${message}`) };
      }
    }
    respond(res, request, scripted);
  }

  const embeddingRequests: Array<{ model: string; input: string[] }> = [];
  const embeddingQueue: ScriptedResponse[] = [];

  function handleEmbeddings(req: http.IncomingMessage, res: http.ServerResponse, path: string, raw: Buffer): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      sendJson(res, 400, errorBody(400, 'Request body is not valid JSON'));
      return;
    }
    const body = parsed as { model?: unknown; input?: unknown; encoding_format?: unknown };
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (typeof body.model !== 'string' || !Array.isArray(input) || input.length === 0 || !input.every((i) => typeof i === 'string')) {
      sendJson(res, 400, errorBody(400, 'Request body needs a string `model` and `input` (a string or an array of strings)'));
      return;
    }
    const texts = input as string[];
    embeddingRequests.push({ model: body.model, input: texts });
    const scripted = embeddingQueue.shift();
    if (scripted) {
      const request: RecordedRequest = {
        path,
        headers: { ...req.headers },
        body: { model: body.model, messages: [] },
        schemaName: null,
        receivedAt: Date.now(),
      };
      respond(res, request, scripted);
      return;
    }
    const base64 = body.encoding_format === 'base64';
    sendJson(res, 200, {
      object: 'list',
      model: body.model,
      data: texts.map((text, index) => {
        const vector = scriptedEmbedding(text, body.model as string);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
        };
      }),
      usage: {
        prompt_tokens: texts.reduce((n, t) => n + estimateTokens(t.length), 0),
        total_tokens: texts.reduce((n, t) => n + estimateTokens(t.length), 0),
      },
    });
  }

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
        void handleCompletion(req, res, path, Buffer.concat(chunks)).catch((error: unknown) => {
          sendJson(res, 500, errorBody(500, `Scripted LLM server failed: ${String(error)}`));
        });
        return;
      }
      if (req.method === 'POST' && (path === '/v1/embeddings' || path === '/embeddings')) {
        handleEmbeddings(req, res, path, Buffer.concat(chunks));
        return;
      }
      if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
        sendJson(res, 200, {
          object: 'list',
          data: [{ id: 'scripted-model', object: 'model', created: 0, owned_by: 'scripted-llm-server' }],
        });
        return;
      }
      sendJson(res, 404, errorBody(404, `Unknown endpoint: ${req.method ?? '?'} ${path}`));
    });
  });
  // Longer than undici's default keep-alive so pooled sockets are reused rather than raced.
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    embeddingRequests,
    enqueueEmbeddings(...responses) {
      embeddingQueue.push(...responses);
    },
    enqueue(...responses) {
      queue.push(...responses);
    },
    setFallback(responder) {
      fallback = responder;
    },
    waitForRequests(count, timeoutMs) {
      return arrivals.waitFor(count, timeoutMs);
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
      embeddingRequests.length = 0;
      embeddingQueue.length = 0;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      arrivals.close();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await done;
    },
  };
}
