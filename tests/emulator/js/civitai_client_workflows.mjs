// Drives a live blockkit emulator with the published @civitai/client (nothing of it changed).
// Environment: ORCH_URL (the orchestration origin), BASE_URL (for the emulator clock), API_KEY.
// Prints one JSON object: for each call, {status, data, error} as the client returned them.
import {
  addWorkflowTag,
  createCivitaiClient,
  deleteWorkflow,
  getWorkflow,
  getWorkflowStep,
  patchWorkflow,
  queryWorkflows,
  removeWorkflowTag,
  submitWorkflow,
} from '@civitai/client';

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

const template = (prompt, tags) => ({
  tags,
  metadata: { title: prompt },
  steps: [{ $type: 'textToImage', name: 'gen', input: { prompt, seed: 3 }, metadata: { pass: 1 } }],
});

const first = await record('submit', submitWorkflow({ client, body: template('a red fox', ['fox']) }));
await advance(60);
const second = await record('submitOther', submitWorkflow({ client, body: template('a grey heron', ['heron']) }));
await record('get', getWorkflow({ client, path: { workflowId: first.id } }));
await record('queryTags', queryWorkflows({ client, query: { tags: ['fox'], take: 10 } }));
await record('queryPage1', queryWorkflows({ client, query: { take: 1 } }));
await record('queryPage2', queryWorkflows({ client, query: { take: 1, cursor: out.queryPage1.data.next } }));
await record('addTag', addWorkflowTag({ client, path: { workflowId: first.id }, body: 'kept/with slash' }));
await record('addTag2', addWorkflowTag({ client, path: { workflowId: first.id }, body: 'dropped' }));
await record('removeTag', removeWorkflowTag({ client, path: { workflowId: first.id, tag: 'dropped' } }));
await record('patch', patchWorkflow({
  client, path: { workflowId: first.id },
  body: [
    { op: 'test', path: '/metadata/title', value: 'a red fox' },
    { op: 'add', path: '/metadata/rating', value: 5 },
    { op: 'add', path: '/tags/-', value: 'patched' },
  ],
}));
await record('patchBad', patchWorkflow({
  client, path: { workflowId: first.id }, body: [{ op: 'replace', path: '/cost', value: 0 }],
}));
await record('afterEdits', getWorkflow({ client, path: { workflowId: first.id } }));
await record('queryAfterEdits', queryWorkflows({ client, query: { tags: ['kept/with slash', 'patched'] } }));
await record('step', getWorkflowStep({ client, path: { workflowId: first.id, stepName: 'gen' } }));
await record('stepMissing', getWorkflowStep({ client, path: { workflowId: first.id, stepName: 'nope' } }));
await record('delete', deleteWorkflow({ client, path: { workflowId: second.id } }));
await record('getDeleted', getWorkflow({ client, path: { workflowId: second.id } }));
await record('deleteAgain', deleteWorkflow({ client, path: { workflowId: second.id } }));
await record('queryAfterDelete', queryWorkflows({ client, query: {} }));

process.stdout.write(JSON.stringify(out));
