// the dashboard: the token, the API, the figures' tables and lists, the jobs (inlined into dashboard.html by routes/pages.py, in this order)
const TOKEN_KEY = "briefd-token";
const AWAY = "the server does not answer";
const SKIPPED_SHOWN = 50;  // skipped files and front-matter problems listed
const $ = (id) => document.getElementById(id);
let timer = null;
let healthTimer = null;

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (token()) headers["Authorization"] = "Bearer " + token();
  // relative to this page, so a reverse proxy may serve it under a path (…/briefd/)
  let response;
  try {
    response = await fetch(path.replace(/^\//, ""), Object.assign({}, options, {headers}));
  } catch (e) { throw new Error(AWAY + " (" + e.message + ")"); }
  let body = null;
  try { body = await response.json(); } catch (e) { body = null; }
  if (response.status === 401) { showLogin("The token was not accepted."); throw new Error("unauthorized"); }
  if (!response.ok) {
    const detail = body && body.detail ? body.detail : response.statusText;
    throw Object.assign(new Error(`${response.status}: ${detail}`), {status: response.status});
  }
  return body;
}

// the actions need the token as the figures do: shown with them, not in front of the token
// field (a keyboard reached it after three buttons that asked to confirm, then did nothing)
function showApp() {
  $("login").hidden = true;
  $("app").hidden = false;
  $("actions").hidden = false;
}

function showLogin(error) {
  $("app").hidden = true;
  $("actions").hidden = true;
  $("login").hidden = false;
  $("token-input").focus();
  $("login-error").textContent = token() ? (error || "") : "";
  if (timer) { clearInterval(timer); timer = null; }
  if (healthTimer) { clearInterval(healthTimer); healthTimer = null; }
}

function message(text, bad) {
  const el = $("message");
  el.textContent = text;
  el.className = bad ? "bad" : "ok";
}

function fmt(n) {
  if (n === null || n === undefined) return "–";
  if (typeof n === "number") return Number.isInteger(n) ? n.toLocaleString("en-US") : n.toLocaleString("en-US", {maximumFractionDigits: 2});
  return String(n);
}

// "1 document", "3 documents": a count and its noun, singular for one
function counted(n, noun, plural) {
  return `${fmt(n)} ${n === 1 ? noun : plural || noun + "s"}`;
}

function fillTable(id, rows) {
  const body = $(id).querySelector("tbody");
  body.replaceChildren();
  for (const row of rows) {
    const tr = document.createElement("tr");
    for (const [value, cls] of row) {
      const td = document.createElement("td");
      td.textContent = printable(fmt(value));  // a path, a title: never shown reordered
      if (cls) td.className = cls;
      tr.append(td);
    }
    body.append(tr);
  }
  if (!rows.length) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = 8; td.className = "muted"; td.textContent = "nothing yet";
    tr.append(td); body.append(tr);
  }
}

// a list cut at its first few ends in a fold: what this page holds past them (`hidden`, shown
// by its button, kept open over the refreshes) and how many the server did not send (`unsent`),
// with the command that lists every one (`where`): "… and 6 more orphans" was a dead end
const opened = new Set();
const fold = (key, hidden, unsent, what, where) => ({key, hidden, unsent, what, where});

function fillList(id, items, again) {
  const list = $(id);
  list.replaceChildren();
  const line = (text) => {
    const li = document.createElement("li");
    li.textContent = printable(text);  // a file's name as it is (skipped, findings, never served)
    list.append(li);
    return li;
  };
  for (const item of items) {
    if (typeof item === "string") { line(item); continue; }
    const open = opened.has(`${id} ${item.key}`);
    if (open) item.hidden.forEach(line);
    const left = (open ? 0 : item.hidden.length) + item.unsent;
    if (left <= 0) continue;
    const li = line(`… and ${left} more${item.what ? " " + item.what : ""}` + (item.unsent ? `; ${item.where}` : ""));
    if (open || !item.hidden.length) continue;
    const button = document.createElement("button");
    button.type = "button"; button.className = "more";
    button.textContent = `show ${item.hidden.length} more`;
    button.addEventListener("click", () => { opened.add(`${id} ${item.key}`); again(); });
    li.append(" ", button);
  }
}

// a card holds about ten digits at 22px: from a million on a figure is shown compact ("1.23B"),
// the exact one on hover
const COMPACT = new Intl.NumberFormat("en-US", {notation: "compact", maximumFractionDigits: 2});
function stat(id, n) {
  const big = typeof n === "number" && Math.abs(n) >= 1e6;
  $(id).textContent = big ? COMPACT.format(n) : fmt(n);
  $(id).title = big ? fmt(n) : "";
}

// what answers those who watch the server — a container's health check every 10 s, this page's
// own refreshes every 10 s — is not what the team asks of it: left out of the requests card
// (a day of both read as some 17,000 requests), listed in the table
const WATCHING = new Set(["rest health", "rest stats", "rest dashboard_health"]);

function render(s) {
  const asked = s.requests.filter((r) => !WATCHING.has(`${r.surface} ${r.name}`));
  const total = asked.reduce((sum, r) => sum + r.count, 0);
  stat("stat-documents", s.index.documents);
  stat("stat-chunks", s.index.chunks);
  stat("stat-vectors", s.index.vectors);
  stat("stat-requests", total);
  stat("stat-tokens", s.tokens_served);
  $("stat-cache").textContent = s.cache.hit_rate === null ? "–" : (100 * s.cache.hit_rate).toFixed(1) + "%";
  stat("stat-embeddings", s.embedding_calls);
  stat("stat-queries", s.queries_logged);
  $("freshness").textContent = s.index.last_indexed_at ? "indexed " + s.index.last_indexed_at : "not indexed yet";
  $("counters-since").textContent = s.counters_reset_at ? "counters since " + s.counters_reset_at : "counters since the first start";
  fillTable("requests-table", s.requests.map((r) => [[r.surface], [r.name], [r.count, "num"], [r.errors, "num"], [r.invalid, "num"], [r.mean_ms, "num"], [r.p50_ms, "num"], [r.p95_ms, "num"], [r.tokens, "num"]]));
  fillTable("scopes-table", s.index.scopes.map((x) => [[x.name], [x.documents, "num"], [x.chunks, "num"]]));
  // the sync row is stored as "git"; a plain folder (no .git) has neither git nor a commit
  fillTable("sync-table", s.sync.map((x) => [[x.kind === "directory" ? "folder" : x.source], [x.last_sync_at], [x.last_commit ? x.last_commit.slice(0, 10) : "–"], [x.last_error || "ok", x.last_error ? "bad" : "ok"]]));
  // the shared state (PostgreSQL) away: the team's counts are unknown, not zero
  // proposals off (the default): three zeros said nothing of why none ever comes
  const off = s.proposals_enabled === false ? [[["off: agents are not offered propose_update (proposals.enabled in briefd.yaml)", "muted"]]] : [];
  fillTable("proposals-table", s.proposals === null ? [[["unavailable: " + s.state_error]]]
    : off.concat(Object.entries(s.proposals).map(([k, v]) => [[k], [v, "num"]])));
  fillTable("links-table", Object.entries(s.links.counts).map(([k, v]) => [[k.replace("_", " ")], [v, "num"]]));
  fillList("links-list", findings(s.links), () => render(s));
  const skipped = (s.index.skipped || []).map((x) => `${x.path}: ${x.reason}`);
  const problems = (s.index.problems || []).map((x) => `${x.path}: ${x.problem}`);
  // a document indexed without its front matter first: many files outside the scopes (an
  // archive/ folder) must not hide it, and what is left out is counted
  // /api/stats lists the first 50 of each and counts them all
  const everyOne = (s.index.problems_count ?? problems.length) + (s.index.skipped_count ?? skipped.length);
  const listed = problems.concat(skipped), more = everyOne - Math.min(listed.length, SKIPPED_SHOWN);
  fillList("skipped-list", listed.slice(0, SKIPPED_SHOWN).concat(more > 0
    ? [fold("all", listed.slice(SKIPPED_SHOWN), everyOne - listed.length, "", "`briefd index --json` lists every one")] : []), () => render(s));
  // what the start-up log warns about the index (no document indexed: why; a default scope it
  // lacks) leads: an index of 0 documents was only zeros and "nothing yet" here
  const warnings = s.index.warnings || [];
  $("skipped-list").prepend(...warnings.map((text) => {
    const li = document.createElement("li"); li.className = "bad"; li.textContent = "warning: " + text;
    return li;
  }));
  saidDamaged(s);
  const jobs = Object.values(s.jobs || {}).map((j) => `${j.name}: ${j.finished_at ? (j.error ? failure(j, s.sync) : "done " + j.finished_at) : "running since " + j.started_at}`);
  $("jobs").textContent = jobs.join(" · ");
  ended(s.jobs || {});
}

// each finding the table counts, as `briefd links` names it: what `--check` fails on (broken
// links, unknown anchors) first, the first ten of each kind and how many more; a count alone
// (orphans 3) left nothing to go and fix
const FINDINGS_SHOWN = 10;
const FINDINGS = [
  // a broken link's reason, as `briefd links` prints it: "README.md exists but is outside every scope",
  // "leads out of the knowledge folder", "not indexed: UTF-16 text" do not read as typos
  ["broken", "broken links", (r) => `broken: ${r.source_path}:${r.line} → ${r.target} (${r.detail})`],
  ["unknown_anchors", "unknown anchors", (r) => `unknown anchor: ${r.source_path}:${r.line}: ${r.detail}`],
  ["ambiguous", "ambiguous links", (r) => `ambiguous: ${r.source_path}:${r.line}: ${r.detail}`],
  ["duplicate_anchors", "duplicate anchors", (d) => `duplicate anchor: ${d.path}: #${d.anchor} on lines ${d.lines.join(", ")}`],
  ["to_superseded", "links to superseded documents", (r) => `to superseded: ${r.source_path}:${r.line}: ${r.detail}`],
  ["orphans", "orphans", (path) => `orphan (no inbound links): ${path}`],
];

function findings(links) {
  return FINDINGS.flatMap(([key, what, line]) => {
    // /api/stats sends the first 50 of each kind
    const sent = links[key].map(line), unsent = links.counts[key] - sent.length;
    const cut = sent.length - FINDINGS_SHOWN + unsent > 0;
    return sent.slice(0, FINDINGS_SHOWN).concat(cut
      ? [fold(key, sent.slice(FINDINGS_SHOWN), unsent, what, "`briefd links` lists every one")] : []);
  });
}

// a failed job's line, unless a run since succeeded where it failed (the index row for a
// rebuild, the sync row for a sync): "failed: …" then no longer says how things stand
function failure(job, rows) {
  const row = rows.find((x) => (x.source === "index") === (job.name === "rebuild"));
  if (!row || row.last_error || !row.last_sync_at || row.last_sync_at < job.finished_at) return "failed: " + job.error;
  const what = job.name === "rebuild" ? "the index was built" : "a sync succeeded";
  return `failed at ${job.finished_at}; ${what} since (at ${row.last_sync_at})`;
}

// the job this page started (a rebuild, a sync): how it ended is said where its start was, not
// only in the Sync panel's grey line below the fold
let started = null;

// a rebuild asked for while one runs (another tab, a teammate's) is refused (409): this page
// follows the one running instead, from the figures' next refresh — not one that had ended
// before the click (a 409 for another reason)
let joining = null, jobsSeen = {};

function ended(jobs) {
  if (joining) {
    const job = jobs[joining.name], known = joining.known;
    if (job && !(known && known.finished_at && known.started_at === job.started_at)) started = job;
    joining = null;
  }
  jobsSeen = jobs;
  const job = started && jobs[started.name];
  if (!job || job.started_at !== started.started_at || !job.finished_at) return;
  started = null;
  const commit = job.summary.commit ? `commit ${job.summary.commit.slice(0, 10)}, ` : "";
  message(job.error ? `${job.name} failed: ${job.error}`
    : `${job.name} done: ${commit}${counted(job.summary.documents, "document")}, ${counted(job.summary.chunks, "section")}`, !!job.error);
  // a sync reads the code repositories' new commits and a run changes what is never served:
  // the health panels load now, not at their next minute ("sync done" over the old drift)
  if (!job.error) refreshHealth().catch(noHealth);
}

function follow() {  // every second while the job runs, then the usual 10 s refresh
  refresh().then(() => { if (started) setTimeout(follow, 1000); }).catch(() => {});
}

const STALE = "cannot load stats: ";
// the server's 503 while the index is built speaks to whoever started it (its stderr, try again
// later): this page says it in its own terms, as it checks again by itself
const BUILDING = ": the figures appear here when it is done (this page checks every 3 s).";
const SEARCH_AGAIN = ": search again once the figures above appear";  // a search meanwhile
const SEARCH_BACK = "the server did not answer it; it answers again: search again";

// what is being built when a request failed because the index is (/api/health says so, open
// without a token): the first index, or a new file the server fills from the source where the
// served one was deleted (its notice says when); "" when nothing is
async function building(e) {
  const health = await healthOn503(e);
  if (!health || health.status !== "building") return "";
  const deleted = /^the index file was deleted at ([^;]+);/.exec(health.notice || "");
  return deleted
    ? `the index file was deleted at ${deleted[1]}, and a new one is being filled from the source`
    : "the index is being built for the first time";
}

async function refresh() {
  const s = await api("/api/stats");
  showApp();
  const said = $("message").textContent;
  if (said.startsWith(STALE) || said.endsWith(BUILDING) || said.endsWith(SEARCH_AGAIN)) {
    message("", false);  // the figures are back: what was said of their absence is past
  }
  // a search the server was away for: "the server does not answer" stood on while it did again
  if (said.startsWith(SEARCH_FAILED + AWAY)) message(SEARCH_FAILED + SEARCH_BACK, false);
  // the server is back: the health panels that failed with it load now, not a minute later
  if ($("message").textContent.startsWith(NO_HEALTH + AWAY)) refreshHealth().catch(noHealth);
  render(s);
  return s;
}

async function healthOn503(e) {
  if (e.status !== 503) return null;
  try { return await api("/api/health"); } catch (err) { return null; }
}

// the index file found damaged (/api/health says so): the server's 503 names `briefd index
// --rebuild`, a shell a team lead at this page may not have (a container); the button above
// rebuilds it. "" when the index is not damaged.
async function damaged(e) {
  const health = await healthOn503(e);
  if (!health || health.status !== "damaged") return "";
  return rebuildHere(health.notice);
}

// the index file found damaged by a request: the figures may still read (their pages intact)
// while every search fails, and nothing here said so; said above them until a rebuild ends it
const DAMAGED = "the index file was found damaged";
function saidDamaged(s) {
  const rebuilding = s.jobs && s.jobs.rebuild && !s.jobs.rebuild.finished_at;
  if (s.index.damaged && !rebuilding) message(rebuildHere(s.index.damaged), true);
  else if ($("message").textContent.startsWith(DAMAGED)) message("", false);
}

// the server's notice of a damaged file names `briefd index --rebuild`, a shell a team lead at
// this page may not have (a container): the button above rebuilds it
function rebuildHere(notice) {
  const found = /^(the index file was found damaged at [^;]+);/.exec(notice || "");
  return (found ? found[1] : DAMAGED) + ": \u201cRebuild index\u201d above builds it anew from the knowledge source (searches fail until then)";
}

// a refresh that fails (the server stopped, a proxy answers 502) leaves the last figures up:
// say that they are old until a refresh succeeds again
async function stale(e) {
  if (e.message === "unauthorized") return;
  const broken = await damaged(e);
  message(broken || STALE + e.message + "; the figures below may be out of date, trying again every 10 s", true);
}
