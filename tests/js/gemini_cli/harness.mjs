// Drives Gemini CLI's own code (@google/gemini-cli-core, installed next to this file) for
// tests/test_gemini_cli_differential.py. Reads {"jobs": [...]} as JSON on stdin and writes {"results": [...]} to the
// file named by its argument (stdout carries Gemini CLI's own debug lines):
//
//   {"op": "estimate", "parts": [...]}                 -> estimateTokenCountSync(parts)
//   {"op": "estimates", "lists": [[...], ...]}         -> estimateTokenCountSync of each list
//   {"op": "prefix_estimates", "parts": [[...], ...], "cuts": [n, ...]}
//                                                      -> estimateTokenCountSync of the first n lists' parts, each n
//   {"op": "split", "contents": [...], "fraction": f}  -> findCompressSplitPoint(contents, f)
//   {"op": "prefix_splits", "contents": [...], "cuts": [n, ...], "fraction": f}
//                                                      -> findCompressSplitPoint of the first n contents, each n
//   {"op": "mask", "history": [...], "config": {...}}  -> ToolOutputMaskingService.mask(history)
//   {"op": "constants"}                                -> the environment-context text and masked-file suffix this
//                                                         harness makes Gemini CLI produce
//   {"op": "replay", "config": {...}, "calls": [...]}  -> a chat replayed call by call, as GeminiClient drives it
//
// A replay feeds, before each model call, the contents the log added since the previous call (the model's last
// response and the new request), the last prompt token count the chat would hold, and the summary model's answers.
// It then runs what GeminiClient.sendMessageStream runs before sending: tryCompressChat
// (ChatCompressionService.compress with this client's hasFailedCompressionAttempt, the summary model stubbed) and
// tryMaskToolOutputs (ToolOutputMaskingService.mask), and reports the history that call sends (its sha256
// fingerprint, unless "full"), its estimate, the compression status and the summary requests (the fingerprint of
// everything but the last content, and the last content's role). The few lines of GeminiClient that react to a
// compression's status are re-created below (the client itself needs a live model and tool registry).
// Nothing here reaches the network; files the services write go under the working directory the test gives.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const here = path.dirname(new URL(import.meta.url).pathname);
const core = path.join(here, 'node_modules', '@google', 'gemini-cli-core', 'dist', 'src');
const load = (file) => import(pathToFileURL(path.join(core, file)).href);

const { estimateTokenCountSync } = await load('utils/tokenCalculation.js');
const { ChatCompressionService, findCompressSplitPoint } = await load('context/chatCompressionService.js');
const { ToolOutputMaskingService } = await load('context/toolOutputMaskingService.js');
const { CompressionStatus } = await load('core/turn.js');
const { getEnvironmentContext, getInitialChatHistory } = await load('utils/environmentContext.js');
const { tokenLimit } = await load('core/tokenLimits.js');

// the two sources of chance and time the services read: a fixed masked-file suffix and a fixed date
const RANDOM = 0.123456789;
Math.random = () => RANDOM;
Date.prototype.toLocaleDateString = () => 'Saturday, August 1, 2026';

function makeConfig(cfg, state) {
  const known = {
    config: undefined,
    storage: { getProjectTempDir: () => cfg.projectTempDir },
    getSessionId: () => cfg.sessionId,
    getModel: () => cfg.model,
    getActiveModel: () => cfg.model,
    getApprovedPlanPath: () => undefined,
    getHookSystem: () => undefined,
    getCompressionThreshold: async () => cfg.threshold,
    getNextCompressionTruncationId: () => ++state.truncationId,
    getTruncateToolOutputThreshold: () =>
      Math.min(4 * (tokenLimit(cfg.model) - state.lastPrompt), cfg.truncateToolOutputThreshold),
    getToolOutputMaskingConfig: async () => ({
      protectionThresholdTokens: cfg.protectionThresholdTokens,
      minPrunableThresholdTokens: cfg.minPrunableThresholdTokens,
      protectLatestTurn: cfg.protectLatestTurn,
    }),
    getBaseLlmClient: () => ({
      generateContent: async (request) => {
        const sent = request.contents;
        state.requests.push([digest(sent.slice(0, -1)), sent[sent.length - 1].role]);
        const text = state.summaries.shift() ?? '';
        return { candidates: [{ content: { role: 'model', parts: [{ text }] } }] };
      },
    }),
    getContentGenerator: () => ({ countTokens: async () => { throw new Error('no countTokens offline'); } }),
    getIncludeDirectoryTree: () => false,
    getSessionMemory: () => '',
    getUsageStatisticsEnabled: () => false,
    getTelemetryEnabled: () => false,
    getDebugMode: () => false,
  };
  const config = new Proxy(known, {
    get(target, name) {
      if (name in target) return target[name];
      if (typeof name === 'symbol' || name === 'then') return undefined;
      return () => undefined;
    },
  });
  known.config = config;
  return config;
}

const digest = (value) => createHash('sha256').update(JSON.stringify(value)).digest('hex');
const plain = (items) => items.map((c) => ('content' in c ? c.content : c));
const partsOf = (contents) => contents.flatMap((c) => c.parts || []);

async function replay(job) {
  const cfg = job.config;
  const state = { truncationId: 0, lastPrompt: 0, requests: [], summaries: [] };
  const config = makeConfig(cfg, state);
  const compressor = new ChatCompressionService();
  const masker = new ToolOutputMaskingService();
  let history = [];
  let pending = [];
  let hasFailedCompressionAttempt = false;
  const steps = [];
  for (const call of job.calls) {
    // what was sent last time joins the history, then what the log added: up to the model's last response it is
    // history, the rest is this call's request
    history.push(...pending);
    const added = call.added;
    let cut = added.length;
    while (cut > 0 && added[cut - 1].role !== 'model') cut--;
    history.push(...added.slice(0, cut));
    pending = added.slice(cut);
    state.lastPrompt = call.lastPrompt;
    state.requests = [];
    state.summaries = [...(call.summaries || [])];
    const step = { status: null, masked: 0 };
    if (cfg.compression) {
      const chat = { getHistory: () => [...history], getLastPromptTokenCount: () => state.lastPrompt };
      const { newHistory, info } = await compressor.compress(
        chat, 'prompt', false, cfg.model, config, hasFailedCompressionAttempt);
      step.status = Object.keys(CompressionStatus).find((k) => CompressionStatus[k] === info.compressionStatus);
      step.originalTokenCount = info.originalTokenCount;
      step.newTokenCount = info.newTokenCount;
      if (info.compressionStatus === CompressionStatus.COMPRESSION_FAILED_INFLATED_TOKEN_COUNT) {
        hasFailedCompressionAttempt = true; // `|| !force`, and the replay never forces
      } else if (info.compressionStatus === CompressionStatus.COMPRESSED && newHistory) {
        step.extraTokens = estimateTokenCountSync(partsOf(newHistory));
        history = plain(await getInitialChatHistory(config, newHistory)); // GeminiClient.startChat
        hasFailedCompressionAttempt = false;
      } else if (info.compressionStatus === CompressionStatus.CONTENT_TRUNCATED && newHistory) {
        history = [...newHistory]; // GeminiChat.setHistory
      }
    }
    if (cfg.masking) {
      const result = await masker.mask(history, config);
      step.masked = result.maskedCount;
      step.tokensSaved = result.tokensSaved;
      if (result.maskedCount > 0) history = [...result.newHistory];
    }
    step.requests = state.requests;
    const sent = [...history, ...pending];
    step.sent = job.full ? sent : digest(sent);
    step.tokens = estimateTokenCountSync(partsOf(sent));
    steps.push(step);
  }
  return steps;
}

async function run(job) {
  switch (job.op) {
    case 'estimate':
      return estimateTokenCountSync(job.parts);
    case 'estimates':
      return job.lists.map((parts) => estimateTokenCountSync(parts));
    case 'prefix_estimates':
      return job.cuts.map((n) => estimateTokenCountSync(job.parts.slice(0, n).flat()));
    case 'split':
      return findCompressSplitPoint(job.contents, job.fraction);
    case 'prefix_splits':
      return job.cuts.map((n) => findCompressSplitPoint(job.contents.slice(0, n), job.fraction));
    case 'mask': {
      const state = { truncationId: 0, lastPrompt: 0, requests: [], summaries: [] };
      const result = await new ToolOutputMaskingService().mask(job.history, makeConfig(job.config, state));
      return { history: result.newHistory, maskedCount: result.maskedCount, tokensSaved: result.tokensSaved };
    }
    case 'constants': {
      const parts = await getEnvironmentContext(makeConfig(job.config, {}));
      return { environment: parts.map((p) => p.text || '').join('\n\n'),
        suffix: RANDOM.toString(36).substring(7), tokenLimit: tokenLimit(job.config.model) };
    }
    case 'replay':
      return replay(job);
    default:
      throw new Error(`unknown op ${job.op}`);
  }
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { jobs } = JSON.parse(input);
const results = [];
for (const job of jobs) results.push(await run(job));
fs.writeFileSync(process.argv[2], JSON.stringify({ results }));
