// Drives a live blockkit emulator with the published @civitai/client (nothing of it changed): the
// WorkflowTemplate members that move money or time (currencies, externalId, tips, callbacks, step
// priority/timeout/retries), whatif and wait.
// Environment: ORCH_URL, BASE_URL (for the emulator clock), API_KEY, CALLBACK_URL (a loopback receiver).
// Prints one JSON object: for each call, {status, data, error} as the client returned them.
import { createCivitaiClient, getWorkflow, submitWorkflow } from '@civitai/client';

const client = createCivitaiClient({ baseUrl: process.env.ORCH_URL, auth: process.env.API_KEY });
const out = {};

async function record(name, call) {
  const result = await call;
  out[name] = { status: result.response ? result.response.status : null, data: result.data ?? null,
                error: result.error ?? null };
  return result.data;
}

async function advance(seconds) {
  const response = await fetch(`${process.env.BASE_URL}/__emulator/clock`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ advance: seconds }),
  });
  if (!response.ok) throw new Error(`clock: ${response.status}`);
}

const paid = (extra) => ({
  currencies: ['yellow'],
  tips: { civitai: 0.5, creators: 0.25 },
  steps: [{ $type: 'textToImage', name: 'gen', priority: 'high', timeout: '00:01:00', retries: 2,
            input: { prompt: 'a lantern', seed: 5, width: 1024, height: 1024 } }],
  ...extra,
});

await record('whatif', submitWorkflow({ client, body: paid({}), query: { whatif: true } }));
const first = await record('submit', submitWorkflow({
  client,
  body: paid({
    externalId: 'order-1',
    callbacks: [{ url: process.env.CALLBACK_URL, type: ['workflow:*', 'step:succeeded', 'job:*'], detailed: true }],
  }),
}));
await record('again', submitWorkflow({ client, body: paid({ externalId: 'order-1' }) }));
await record('otherKey', submitWorkflow({ client, body: paid({ externalId: 'order-2' }) }));
await record('badCurrency', submitWorkflow({ client, body: paid({ currencies: ['purple'] }) }));
await record('badExternalId', submitWorkflow({ client, body: paid({ externalId: 'has space' }) }));
// A step that needs 4 s against a 1 s timeout: three attempts (retries 2), then it expires and is refunded.
const timed = await record('timedOut', submitWorkflow({
  client,
  body: { steps: [{ $type: 'textToImage', name: 'slow', timeout: '00:00:01', retries: 2, input: { prompt: 'slow' } }] },
}));
// wait: held for 1 s of a 6 s workflow, so 202 with the workflow as it stands.
const waited = await record('waitShort', submitWorkflow({
  client, body: { steps: [{ $type: 'textToImage', input: { prompt: 'quick' } }] }, query: { wait: 1 },
}));
await advance(60);
await record('first', getWorkflow({ client, path: { workflowId: first.id } }));
await record('timedOutLater', getWorkflow({ client, path: { workflowId: timed.id } }));
await record('waitDone', getWorkflow({ client, path: { workflowId: waited.id }, query: { wait: 5 } }));

process.stdout.write(JSON.stringify(out));
