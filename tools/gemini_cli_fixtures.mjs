// Regenerates tests/fixtures/gemini-cli/ by driving Gemini CLI's own ChatRecordingService (the class that writes
// session files), in the order Gemini CLI's GeminiChat calls it, with no model: every response is made up here.
//
//   npm install @google/gemini-cli-core@0.61.0     (the JSONL session and the subagent session)
//   node tools/gemini_cli_fixtures.mjs jsonl PATH/TO/node_modules
//   npm install @google/gemini-cli-core@0.24.0     (in another folder: the legacy .json session)
//   node tools/gemini_cli_fixtures.mjs json PATH/TO/node_modules
//
// The clock is fixed, and so is every message id the recording API takes (0.61; 0.24 draws its own).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [mode, modules] = process.argv.slice(2);
const out = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', 'tests', 'fixtures', 'gemini-cli');
const core = await import(pathToFileURL(path.join(modules, '@google', 'gemini-cli-core', 'dist', 'index.js')).href);

// a fixed clock: every call to Date moves it one second on
let clock = Date.parse('2026-08-01T09:00:00.000Z');
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    if (args.length) super(...args);
    else super((clock += 1000));
  }
  static now() {
    return (clock += 1000);
  }
};

const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'gemini-fixtures-'));
const tools = {
  read_file: { displayName: 'ReadFile', description: 'Reads a file.', isOutputMarkdown: true },
  run_shell_command: { displayName: 'Shell', description: 'Runs a shell command.', isOutputMarkdown: false },
  codebase_investigator: { displayName: 'Codebase Investigator', description: 'A subagent.', isOutputMarkdown: true },
};
const config = {
  getProjectRoot: () => '/home/dev/shop',
  storage: { getProjectTempDir: () => temp },
  getWorkspaceContext: () => ({ getDirectories: () => ['/home/dev/shop'] }),
  getToolRegistry: () => ({ getTool: (name) => tools[name] }),
  getSessionId: () => SESSION,
};
const SESSION = '5f0c2a9e-1b7d-4c3e-9a41-0d2b6e8f7a10';
const AGENT = '9d4e1f22-6a3b-4c5d-8e7f-112233445566';
const MODEL = 'gemini-2.5-pro';
const usage = (prompt, cached, out, thoughts) => ({
  promptTokenCount: prompt,
  cachedContentTokenCount: cached,
  candidatesTokenCount: out,
  thoughtsTokenCount: thoughts,
  totalTokenCount: prompt + out + thoughts,
});
const response = (id, name, output) => [{ functionResponse: { id, name, response: { output } } }];
const completed = (id, name, args, output, status = 'success', extra = {}) => ({
  id, name, args, result: response(id, name, output), status, timestamp: new Date().toISOString(), ...extra,
});

function service(promptId, parentSessionId) {
  const context = { promptId, parentSessionId, config, toolRegistry: config.getToolRegistry() };
  return new core.ChatRecordingService(mode === 'json' ? config : context);
}

// one model response as GeminiChat records it: thoughts and usage queued while streaming, the text, then the
// completed tool calls merged into the same message
function respond(rec, id, text, thoughts, tokens, calls = []) {
  for (const thought of thoughts) rec.recordThought(thought);
  rec.recordMessageTokens(tokens);
  if (mode === 'json') {
    if (text) rec.recordMessage({ model: MODEL, type: 'gemini', content: text });
  } else {
    rec.recordMessage({ model: MODEL, type: 'gemini', content: text, id });
  }
  if (calls.length) rec.recordToolCalls(MODEL, calls);
}

// GeminiChat.setHistory: every turn re-recorded under a new id, then the history checkpointed
function setHistory(rec, contents, ids) {
  const turns = contents.map((content, i) => ({
    id: rec.recordSyntheticMessage(content.role === 'user' ? 'user' : 'gemini', content.parts, ids[i]),
    content,
  }));
  rec.updateMessagesFromHistory(turns);
  return turns;
}

const ENVIRONMENT = {
  id: 'environment-context',
  content: { role: 'user', parts: [{ text: '<session_context>\nToday is Saturday, August 1, 2026.\nMy operating system is: linux\nThe project root is /home/dev/shop.\n</session_context>' }] },
};

if (mode === 'jsonl') {
  const rec = service(SESSION);
  await rec.initialize(undefined, 'main');
  // GeminiChat.initialize: the chat's opening history (the environment context) synced into the file
  rec.updateMessagesFromHistory([ENVIRONMENT]);
  rec.recordMessage({ model: MODEL, type: 'info', content: 'Gemini CLI update available! 0.60.1 \u2192 0.61.0',
    id: 'n1' });
  rec.recordMessage({ model: MODEL, type: 'user', content: [{ text: 'Why does the checkout test fail?' }],
    id: 'u1' });
  const read = completed('read_file-1', 'read_file', { file_path: 'tests/test_checkout.py' },
    'def test_total():\n    assert total([2, 3]) == 5\n');
  respond(rec, 'g1', 'I will read the test first.',
    [{ subject: 'Locating the test', description: 'The failing test is in tests/test_checkout.py.' }],
    usage(8200, 0, 24, 40), [read]);
  // Gemini CLI >= 0.44 records the tool response turn as a user message as well
  rec.recordSyntheticMessage('user', response('read_file-1', 'read_file', read.result[0].functionResponse.response.output),
    'u2');
  const run = completed('run_shell_command-2', 'run_shell_command', { command: 'pytest -q' },
    'Command: pytest -q\nOutput: 1 failed: assert 4 == 5\nExit Code: 1', 'error');
  respond(rec, 'g2', '', [{ subject: 'Running it', description: 'Run the test to see the failure.' }],
    usage(8420, 8100, 18, 22), [run]);
  rec.recordSyntheticMessage('user', run.result, 'u3');
  respond(rec, 'g3', 'total() drops the last item: `sum(items[:-1])` should be `sum(items)`.', [],
    usage(8610, 8300, 30, 0));
  rec.recordMessage({ model: MODEL, type: 'user', content: [{ text: 'Try a different idea.' }], id: 'u4' });
  respond(rec, 'g4', 'Maybe the fixture is stale.', [], usage(8700, 8500, 9, 0));
  rec.recordMessage({ model: MODEL, type: 'warning', content: 'Loop detection: the model repeated itself.',
    id: 'n2' });
  // the person rewinds to before "Try a different idea." (drops it and the answer)
  rec.rewindTo('u4');
  rec.recordMessage({ model: MODEL, type: 'user', content: [{ text: 'Fix it and ask a subagent to check callers.' }],
    id: 'u5' });
  const agent = completed('codebase_investigator-3', 'codebase_investigator', { objective: 'Find callers of total()' },
    'Subagent finished: total() is called from cart.py and api.py.', 'success', { agentId: AGENT });
  respond(rec, 'g5', '', [{ subject: 'Delegating', description: 'A subagent can scan the callers.' }],
    usage(8900, 8600, 20, 15), [agent]);
  rec.recordSyntheticMessage('user', agent.result, 'u6');
  respond(rec, 'g6', 'Fixed `total()`; its callers (cart.py, api.py) need no change.', [], usage(9100, 8800, 21, 0));
  rec.saveSummary('Fix the checkout total');

  // tool output masking: the history set again with the old shell output replaced (GeminiChat.setHistory)
  const history = [
    ENVIRONMENT.content,
    { role: 'user', parts: [{ text: 'Why does the checkout test fail?' }] },
    { role: 'model', parts: [{ text: 'I will read the test first.' }, { functionCall: { id: 'read_file-1', name: 'read_file', args: read.args } }] },
    { role: 'user', parts: read.result },
    { role: 'model', parts: [{ functionCall: { id: 'run_shell_command-2', name: 'run_shell_command', args: run.args } }] },
    { role: 'user', parts: response('run_shell_command-2', 'run_shell_command', '<tool_output_masked>Output saved to tool-outputs/run_shell_command-2.txt</tool_output_masked>') },
    { role: 'model', parts: [{ text: 'total() drops the last item: `sum(items[:-1])` should be `sum(items)`.' }] },
    { role: 'user', parts: [{ text: 'Fix it and ask a subagent to check callers.' }] },
    { role: 'model', parts: [{ functionCall: { id: 'codebase_investigator-3', name: 'codebase_investigator', args: agent.args } }] },
    { role: 'user', parts: agent.result },
    { role: 'model', parts: [{ text: 'Fixed `total()`; its callers (cart.py, api.py) need no change.' }] },
  ];
  const masked = setHistory(rec, history, history.map((_, i) => `m${i}`));

  // chat compression: a new chat from the summary and the kept tail, synced into the same file on initialize
  const conversation = rec.getConversation();
  const compressed = service(SESSION);
  await compressed.initialize({ conversation, filePath: rec.getConversationFilePath() });
  compressed.updateMessagesFromHistory([
    ENVIRONMENT,
    { id: 'c1', content: { role: 'user', parts: [{ text: '<state_snapshot>\nThe checkout test failed because total() dropped the last item; it is fixed.\n</state_snapshot>' }] } },
    { id: 'c2', content: { role: 'model', parts: [{ text: 'Got it. Thanks for the additional context!' }] } },
    ...masked.slice(7),
  ]);
  compressed.recordMessage({ model: MODEL, type: 'user', content: [{ text: 'Thanks. Anything else?' }], id: 'u7' });
  for (const t of [{ subject: 'Wrapping up', description: 'Nothing else is needed.' }]) compressed.recordThought(t);
  compressed.recordMessageTokens(usage(2100, 0, 7, 12));
  compressed.recordMessage({ model: MODEL, type: 'gemini', content: 'No, that is all.', id: 'g7' });
  compressed.recordMessage({ model: MODEL, type: 'error', content: 'Quota exceeded for quota metric.',
    id: 'n3' });

  // the subagent's own session, nested under the main session's id
  const sub = service(AGENT, SESSION);
  await sub.initialize(undefined, 'subagent');
  sub.recordMessage({ model: MODEL, type: 'user', content: [{ text: 'Find callers of total()' }], id: 's1' });
  const grep = completed('run_shell_command-s1', 'run_shell_command', { command: 'grep -rn "total(" src' },
    'src/cart.py:12: total(items)\nsrc/api.py:40: total(order.items)');
  respond(sub, 's2', '', [{ subject: 'Searching', description: 'grep for total(' }], usage(3000, 0, 12, 8), [grep]);
  sub.recordSyntheticMessage('user', grep.result, 's3');
  respond(sub, 's4', 'total() is called from cart.py and api.py.', [], usage(3150, 2900, 14, 0));

  fs.mkdirSync(path.join(out, SESSION), { recursive: true });
  fs.copyFileSync(rec.getConversationFilePath(), path.join(out, 'session.jsonl'));
  fs.copyFileSync(sub.getConversationFilePath(), path.join(out, SESSION, `${AGENT}.jsonl`));
} else if (mode === 'json') {
  const rec = service(SESSION);
  rec.initialize();
  rec.recordMessage({ model: MODEL, type: 'user', content: 'List the files in src.' });
  const ls = completed('run_shell_command-1', 'run_shell_command', { command: 'ls src' }, 'cart.py\napi.py');
  respond(rec, null, '', [{ subject: 'Listing', description: 'Use ls.' }], usage(5000, 0, 10, 20), [ls]);
  respond(rec, null, 'src holds cart.py and api.py.', [{ subject: 'Answering', description: 'Two files.' }],
    usage(5100, 4900, 12, 6));
  rec.recordMessage({ model: MODEL, type: 'info', content: 'Gemini CLI update available! 0.24.0 \u2192 0.24.5' });
  fs.copyFileSync(rec.conversationFile, path.join(out, 'legacy-session.json'));
} else {
  throw new Error('usage: node tools/gemini_cli_fixtures.mjs jsonl|json NODE_MODULES');
}
fs.rmSync(temp, { recursive: true, force: true });
