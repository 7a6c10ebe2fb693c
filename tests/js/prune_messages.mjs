// Drives the `ai` package's pruneMessages the way prepareStep does, for tests/test_vercel_ai_differential.py.
// stdin: {"runs": [{"chunks": [[ModelMessage...] appended before each call], "options": {reasoning, toolCalls,
//         emptyMessages}, "compactAfterTokens": N (0: prune before every step)}, ...]}
// stdout: for each run, one object per call: {"estimate", "triggered", "sent": sha256 of JSON.stringify(messages sent),
//          "length": its length, "shape": [[role, [part type:toolCallId...]]...], "projection": sha256 of
//          pruneMessages over the whole history so far}
import { createHash } from 'node:crypto';
import { pruneMessages } from 'ai';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => { text += chunk; });
  process.stdin.on('end', () => resolve(text));
}));

const digest = (messages) => {
  const text = JSON.stringify(messages);
  return { hash: createHash('sha256').update(text, 'utf8').digest('hex'), length: text.length };
};
const shape = (messages) => messages.map((m) => [m.role, typeof m.content === 'string' ? 'string'
  : m.content.map((p) => p.type + (p.toolCallId !== undefined ? ':' + p.toolCallId : ''))]);

const drive = ({ chunks, options, compactAfterTokens }) => {
  let messages = [];   // the loop's message state: what prepareStep returned, plus each step's response messages
  let history = [];    // every message appended, never pruned
  const out = [];
  for (const chunk of chunks) {
    messages = [...messages, ...chunk];
    history = [...history, ...chunk];
    const before = JSON.stringify(messages);
    const estimate = before.length / 4;
    const triggered = compactAfterTokens === 0 || estimate > compactAfterTokens;
    if (triggered) messages = pruneMessages({ messages, ...options });
    const sent = digest(messages);
    out.push({ estimate, triggered, pruned: triggered && JSON.stringify(messages) !== before, sent: sent.hash,
               length: sent.length, shape: shape(messages),
               projection: digest(pruneMessages({ messages: history, ...options })).hash });
  }
  return out;
};

process.stdout.write(JSON.stringify(input.runs.map(drive)));
