// Driven by openai-sdk-check.sh: node check.mjs SIM_URL BARE_URL SIM_ROWS PROMPT_ROWS
import fs from "node:fs";
import OpenAI from "openai";

const [simURL, bareURL, simRows, promptRows] = process.argv.slice(2);
let failed = 0;
const check = (ok, what) => { console.log(`${ok ? "ok  " : "FAIL"} ${what}`); if (!ok) failed++; };
const rows = (p) => fs.readFileSync(p, "utf8").trim().split("\n").map((l) => JSON.parse(l));

const client = new OpenAI({ baseURL: simURL + "/v1", apiKey: "unused" });
const models = await client.models.list();
const ids = models.data.map((m) => m.id);
check(ids.length === 1 && ids[0] === "calibrl-sim", `models.list: ${JSON.stringify(ids)}`);

// The wire format: a row of export --kind sim, cut before the user's reply:
// the shortest row with a second user turn, so that its first exchange fits
// the small simulator's context (the over-long case is checked below).
const size = (msgs) => msgs.slice(0, 4).reduce((n, m) => n + m.content.length, 0);
const row = rows(simRows).map((r) => r.messages).filter((m) => m.length >= 4).sort((x, y) => size(x) - size(y))[0];
const opening = row.slice(0, 2);
const reply1 = row.slice(0, 4);
const ask = (extra = {}, messages = opening) =>
  client.chat.completions.create({ model: "calibrl-sim", messages, ...extra });
const a = await ask({ seed: 42, temperature: 1, max_tokens: 40 });
const b = await ask({ seed: 42, temperature: 1, max_tokens: 40 });
console.log(`     opening: ${a.choices[0].message.content.slice(0, 100)}`);
console.log(`     usage ${JSON.stringify(a.usage)}, finish_reason ${a.choices[0].finish_reason}`);
const parsed = JSON.parse(a.choices[0].message.content);
check(typeof parsed.message === "string" && typeof parsed.end === "boolean", "reply is the JSON shape {message, end, satisfied}");
check(a.choices[0].message.content === b.choices[0].message.content, "same seed, same completion");
check(a.usage.completion_tokens <= 40, `max_tokens 40 honoured (${a.usage.completion_tokens} completion tokens)`);
const g1 = await ask({ seed: 5, temperature: 0, max_tokens: 8 }, reply1);
const g2 = await ask({ seed: 6, temperature: 0, max_tokens: 8 }, reply1);
check(g1.choices[0].message.content === g2.choices[0].message.content, "temperature 0 is greedy: seeds do not matter");

const stream = await client.chat.completions.create({ model: "calibrl-sim", messages: opening, seed: 42, temperature: 1, max_tokens: 40, stream: true, stream_options: { include_usage: true } });
let text = "", usage = null, chunks = 0;
for await (const chunk of stream) {
  if (chunk.choices[0]?.delta?.content) { text += chunk.choices[0].delta.content; chunks++; }
  if (chunk.usage) usage = chunk.usage;
}
check(text === a.choices[0].message.content && usage?.total_tokens === a.usage.total_tokens, "streaming gives the same completion and usage");
check(chunks > 1, `streaming sends the turn as it is sampled (${chunks} content chunks)`);

// A plain call, as an SDK user writes it: no max_tokens, no sampling fields.
const plain = await client.chat.completions.create({ model: "calibrl-sim", messages: opening });
check(typeof JSON.parse(plain.choices[0].message.content).message === "string", `no max_tokens: answered (${plain.usage.completion_tokens} completion tokens)`);

const refused = async (what, params, wantParam, wantCode) => {
  try {
    await client.chat.completions.create({ model: "calibrl-sim", messages: opening, ...params });
    check(false, `${what}: accepted, want 400`);
  } catch (e) {
    check(e instanceof OpenAI.BadRequestError && e.param === wantParam && (wantCode === undefined || e.code === wantCode),
      `${what}: ${e.status} param=${e.param} code=${e.code}: ${String(e.message).slice(0, 90)}`);
  }
};
await refused("stop", { stop: ["\n"] }, "stop");
await refused("temperature 3", { temperature: 3 }, "temperature");
await refused("top_p 0", { top_p: 0 }, "top_p");
await refused("frequency_penalty", { frequency_penalty: 0.5 }, "frequency_penalty");
await refused("n 2", { n: 2 }, "n");
const long = [...opening, { role: "assistant", content: '{"message":"hi","end":false}' }];
for (let i = 0; i < 40; i++) long.push({ role: "user", content: "What number is missing? Please tell me again." }, { role: "assistant", content: '{"message":"It is 4, as I said.","end":false}' });
long.push({ role: "user", content: "And the other one?" });
// Longer than the simulator's context: played as the in-process learned
// user plays it, the oldest turns after the opening dropped.
const over = await client.chat.completions.create({ model: "calibrl-sim", messages: long, seed: 3 });
check(typeof JSON.parse(over.choices[0].message.content).message === "string" && over.usage.prompt_tokens < 512,
  `over-long conversation: played on ${over.usage.prompt_tokens} prompt tokens`);
try {
  await client.chat.completions.create({ model: "gpt-4o", messages: opening });
  check(false, "unknown model accepted");
} catch (e) {
  check(e instanceof OpenAI.NotFoundError && e.code === "model_not_found", `unknown model: ${e.status} ${e.code}`);
}

// Without --sim: 404 naming --sim, and the SDK does not retry it.
let calls = 0;
const counting = (url, init) => { calls++; return fetch(url, init); };
const bare = new OpenAI({ baseURL: bareURL + "/v1", apiKey: "unused", maxRetries: 3, fetch: counting });
try {
  await bare.chat.completions.create({ model: "calibrl-sim", messages: opening });
  check(false, "no simulator: accepted");
} catch (e) {
  check(e.status === 404 && String(e.message).includes("--sim") && calls === 1,
    `no simulator: ${e.status}, ${calls} request(s) with maxRetries 3: ${String(e.message).slice(0, 80)}`);
}

// Seeds through a JavaScript JSON parser: the exported row's episode_seed
// is a string and survives; a seed above 2^53 sent as a number is refused.
const kw = rows(promptRows)[0].extra_info.interaction_kwargs;
check(typeof kw.episode_seed === "string", `export writes episode_seed as a string (${kw.episode_seed})`);
const post = (body) => fetch(bareURL + "/v1/episodes", { method: "POST", headers: { "Content-Type": "application/json" }, body });
const ok = await post(JSON.stringify({ ...kw, name: undefined, user: "human" }));
const ep = await ok.json();
const tr = await (await fetch(`${bareURL}/v1/episodes/${ep.id}`)).json();
check(ok.status === 201 && tr.episode_seed === kw.episode_seed && tr.task === kw.task && tr.max_turns === kw.max_turns,
  `episode from the row: ${ok.status}, task ${tr.task}, max_turns ${tr.max_turns}, episode_seed ${tr.episode_seed}`);
const bad = await post(`{"task":"${kw.task}","episode_seed":${kw.episode_seed}}`);
const badBody = await bad.json();
check(bad.status === 400, `episode_seed ${kw.episode_seed} as a JSON number: ${bad.status} ${badBody.error?.message?.slice(0, 80)}`);

console.log(failed ? `${failed} check(s) failed` : "all checks passed");
process.exit(failed ? 1 : 0);
