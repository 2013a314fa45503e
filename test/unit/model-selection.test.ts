import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { parseDurationWithUnit } from '../../src/duration.ts';
import { describeModel } from '../../src/llm/create-provider.ts';

const base = { DATA_DIR: '/tmp/sa-model-selection' };

describe('which model a command uses, and saying so', () => {
  it.each([
    [{}, 'offline'],
    [{ OPENAI_API_KEY: 'sk-test' }, 'openai'],
    [{ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, 'openai'],
    [{ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', OPENAI_API_KEY: 'sk-test' }, 'openai'],
    [{ LLM_PROVIDER: 'offline', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, 'offline'],
    [{ LLM_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1' }, 'openai'],
  ])('%j selects the %s provider', (env, provider) => {
    expect(loadConfig({ ...base, ...env }).llm.provider).toBe(provider);
  });

  it('names the offline provider as rules, not a model', () => {
    expect(describeModel(loadConfig(base).llm)).toMatch(
      /^model: the offline rule-based provider \(no OPENAI_BASE_URL or OPENAI_API_KEY set/,
    );
  });

  it('names the model and the endpoint of a local server, and that no key is used', () => {
    const line = describeModel(loadConfig({ ...base, OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1/', OPENAI_MODEL: 'llama3.1' }).llm);
    expect(line).toBe('model: llama3.1 at http://127.0.0.1:11434/v1 (OpenAI-compatible, without a key)');
  });

  it('names the default endpoint with a key, and never prints the key or credentials in the URL', () => {
    const withKey = describeModel(loadConfig({ ...base, OPENAI_API_KEY: 'sk-secret-123' }).llm);
    expect(withKey).toBe('model: gpt-4o-mini at https://api.openai.com/v1 (OpenAI-compatible, with OPENAI_API_KEY)');
    const withUserInfo = describeModel(
      loadConfig({ ...base, OPENAI_BASE_URL: 'https://user:hunter2@llm.example/v1?token=abc', OPENAI_API_KEY: 'sk-secret-123' }).llm,
    );
    expect(withUserInfo).toBe('model: gpt-4o-mini at https://llm.example/v1 (OpenAI-compatible, with OPENAI_API_KEY)');
    expect(withUserInfo).not.toMatch(/hunter2|token=|sk-secret/);
  });
});

describe('durations typed on the command line need a unit', () => {
  it.each([
    ['7', null],
    [' 30 ', null],
    ['1.5', null],
    ['7d', 7 * 86_400_000],
    ['72h', 72 * 3_600_000],
    ['2w', 14 * 86_400_000],
    ['90s', 90_000],
    ['500ms', 500],
    ['7 days', null],
    ['-7d', null],
    ['', null],
  ])('%j → %s', (text, ms) => {
    expect(parseDurationWithUnit(text)).toBe(ms);
  });
});
