// the dashboard: the login, the actions, the first load (inlined into dashboard.html by routes/pages.py, in this order)
async function action(path, label, confirmText) {
  if (confirmText && !window.confirm(confirmText)) return;
  try {
    const body = await api(path, {method: "POST"});
    // a sync asked for while one runs is queued behind it (the answer's "sync" says which)
    const queued = body && body.sync === "queued";
    message(queued ? "sync queued: it runs when the sync in progress ends" : label.endsWith("started") ? label : label + ": done", false);
    if (body && body.job) started = body.job;
  } catch (e) {
    // nothing failed there: "rebuild failed: 409" read as a broken index, and how the rebuild
    // running ended was never said
    const running = e.status === 409 && path === "/api/admin/rebuild";
    if (running) joining = {name: "rebuild", known: jobsSeen.rebuild};
    message(running ? `rebuild not started again: ${e.message.replace(/^409: /, "")}; this page says here how it ends`
      : label.replace(/ started$/, "") + " failed: " + e.message, !running);
  }
  follow();
}

$("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const typed = $("token-input").value.trim();
  if (!typed) { $("login-error").textContent = "Enter the token first."; return; }
  // a header holds ASCII only: a typographic hyphen or quote (pasted from a chat, a wiki) made
  // every request fail in the browser, which read as "the server does not answer"
  const odd = typed.search(/[^\x20-\x7e]/);
  if (odd >= 0) {
    const shown = [...typed.slice(odd)][0];
    $("login-error").textContent = `A token is ASCII: this one has '${shown}' (character ${odd + 1}); copy it again from where it is kept.`;
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, typed);
  message("", false);  // what failed with the old token ("search failed: unauthorized") is over
  start();
});
$("search-form").addEventListener("submit", search);
$("btn-sync").addEventListener("click", () => action("/api/admin/sync", "sync started"));
$("btn-rebuild").addEventListener("click", () => action("/api/admin/rebuild", "rebuild started", "Rebuild the whole index from the knowledge source?"));
$("btn-reset").addEventListener("click", () => action("/api/admin/reset-counters", "counters reset", "Reset all request, token and cache counters to zero?"));

let retry = null;
function start() {
  clearTimeout(retry);
  refresh().then(() => {
    refreshHealth().catch(noHealth);
    if (!timer) timer = setInterval(() => refresh().catch(stale), 10000);
    if (!healthTimer) healthTimer = setInterval(() => refreshHealth().catch(noHealth), 60000);
  }).catch(async (e) => {
    if (e.message === "unauthorized") return;
    // the token was accepted, but there is nothing to show yet (no index: 503): say why where
    // it can be read, keep the actions at hand (sync, rebuild), and try again until there is
    showApp();
    const built = await building(e);
    if (built) message(built[0].toUpperCase() + built.slice(1) + BUILDING, false);
    else message(await damaged(e) || STALE + e.message, true);
    retry = setTimeout(start, 3000);
  });
}
start();
