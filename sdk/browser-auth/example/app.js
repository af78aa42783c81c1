// The sample app: sign in through the hosted page, start an exposed workflow with the end-user
// token, follow its transitions on the SSE stream, sign out (in every tab of the app). serve.mjs writes /config.js from its
// environment (WFE_CLIENT_KEY, ...).
import { createAuthClient, LoginRequiredError } from '/sdk/index.js';
import config from '/config.js';

const $ = (id) => document.getElementById(id);

const auth = createAuthClient({
  clientKey: config.clientKey,
  loginUrl: config.loginUrl,
  identityApi: config.identityApi,
  renewSkewSeconds: config.renewSkewSeconds,
  onRequiresLogin: () => show(null, 'Your session has ended: sign in again.'),
});

function show(session, message) {
  $('signed-out').hidden = Boolean(session);
  $('signed-in').hidden = !session;
  $('email').textContent = session?.email ?? '';
  $('status').textContent = message ?? (session ? 'Signed in.' : 'Signed out.');
}

/** Server-Sent Events over fetch streaming: EventSource cannot send an Authorization header. */
async function* sseEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = { event: 'message', data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event.event = line.slice(6).trim();
        else if (line.startsWith('data:')) event.data += line.slice(5).trimStart();
      }
      if (event.data) yield event;
    }
  }
}

async function startRun() {
  $('transitions').replaceChildren();
  $('result').textContent = '';
  const started = await auth.fetch('/api/workflows/start', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow_type: config.workflowType, initial_data: JSON.parse($('input').value) }),
  });
  const run = await started.json();
  if (!started.ok) {
    $('result').textContent = `Could not start: ${run.error?.code ?? started.status}`;
    return;
  }
  $('run-id').textContent = run.workflow_id;
  const stream = await auth.fetch(`/api/workflows/${encodeURIComponent(run.workflow_id)}/stream`, {
    headers: { accept: 'text/event-stream' },
  });
  for await (const { event, data } of sseEvents(stream)) {
    const body = JSON.parse(data);
    if (event === 'transition') {
      const item = document.createElement('li');
      item.textContent = `${body.from} → ${body.to} (${body.action})`;
      $('transitions').append(item);
    } else if (event === 'completed' || event === 'failed') {
      $('result').textContent = event === 'completed' ? 'Completed.' : `Failed: ${body.error?.message ?? ''}`;
      $('result').dataset.outcome = event;
    } else if (event === 'revoked') {
      $('result').textContent = 'The stream was closed: this session was revoked.';
    }
  }
}

$('workflow-type').textContent = config.workflowType;
$('input').value = JSON.stringify(config.workflowInput);
$('start-form').hidden = !config.workflowType;
$('sign-in').addEventListener('click', () => auth.signIn());
$('renew').addEventListener('click', async () => {
  $('renew-result').textContent = 'Renewing…';
  try {
    const session = await auth.renew();
    $('renew-result').textContent = `Renewed until ${session.expiresAt.toLocaleTimeString()}.`;
  } catch (error) {
    $('renew-result').textContent = `Renewal failed: ${error.name}.`;
  }
});
// signOut() takes the page to the login host, which ends the session and sends it back here, where
// handleCallback() below completes the sign-out; an error page there says why it could not.
$('sign-out').addEventListener('click', () => {
  show(null, 'Signing out…');
  auth.signOut().catch((error) => show(null, `Sign-out failed: ${error.message}`));
});
$('start-form').addEventListener('submit', (event) => {
  event.preventDefault();
  startRun().catch((error) => {
    if (error instanceof LoginRequiredError) show(null, 'Sign in first.');
    else $('result').textContent = `Error: ${error.message}`;
  });
});

try {
  show((await auth.handleCallback()) ?? auth.getSession());
} catch (error) {
  show(null, `Sign-in failed: ${error.message}`);
}
