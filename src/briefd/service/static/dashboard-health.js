// the dashboard: knowledge health: gaps, drift, usage (inlined into dashboard.html by routes/pages.py, in this order)
// text others wrote (a logged query, a file's name) as `briefd gaps` prints it: control characters
// as \xNN, bidirectional overrides (which show it reordered: "yciloP yrteR" as "Retry Policy") and
// characters that show as nothing ("a\u200bb.md" read as "ab.md") as \uNNNN (briefd.text.visible)
const CONTROL = /[\x00-\x1f\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
function printable(text) {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? "\\x" + code.toString(16).padStart(2, "0") : "\\u" + code.toString(16).padStart(4, "0");
  });
}

// a query as long as a pasted log shows its head; the whole is the cell's title (on hover)
const QUERY_SHOWN = 200;
// (cut between characters as a reader sees them, never inside a flag, an emoji or an escape)
const asked = (g) => g.query ? printable(g.query) : "(hashed " + g.key.slice(0, 8) + ")";
const GRAPHEMES = new Intl.Segmenter(undefined, {granularity: "grapheme"});
function head(text) {
  if (text.length <= QUERY_SHOWN) return text;
  let end = 0;
  for (const {segment, index} of GRAPHEMES.segment(text)) {
    if (index + segment.length > QUERY_SHOWN) break;
    end = index + segment.length;
  }
  return text.slice(0, end) + "…";
}
const askedHead = (g) => g.query ? printable(head(g.query)) : asked(g);

// the documents a gap's queries got, each once (its sections come one by one), most served first
const got = (g) => [...new Set(g.sections.map((x) => x.doc_path || x.chunk_id))].join(", ");

function renderHealth(h) {
  // the days are UTC days, the log's: a reader elsewhere sees where the window and a day start
  // a log kept fewer than 30 days (activity.retention_days) is shown over the days it keeps:
  // the days before read as days nobody asked anything
  const kept = h.retention_days > 0 && h.retention_days < 30 ? ` (the query log keeps ${counted(h.retention_days, "day")}: activity.retention_days)` : "";
  $("health-since").textContent = "since " + h.usage.since.slice(0, 16).replace("T", " ") + " UTC" + kept;
  $("chart-requests").innerHTML = h.charts.requests;  // SVG rendered and escaped by the server
  $("chart-latency").innerHTML = h.charts.latency;
  $("chart-documents").innerHTML = h.usage.documents.length ? h.charts.documents : "<p class='muted'>nothing served yet</p>";
  const surfaces = (m) => Object.entries(m).map(([k, v]) => `${k} ${v}`).join(", ");
  fillTable("gaps-table", h.gaps.gaps.map((g) => [
    [askedHead(g) + (g.variants.length ? ` +${g.variants.length} similar` : "")],
    [g.asked, "num"], [surfaces(g.surfaces)], [g.empty, "num"], [g.gated, "num"], [g.unhelped, "num"],
    [g.best_score === null ? "–" : g.best_score.toFixed(3), "num"], [g.weakness.toFixed(2)],
    [got(g) || "–"]]));
  document.querySelectorAll("#gaps-table tbody tr").forEach((tr, i) => {
    const g = h.gaps.gaps[i]; if (!g) return;
    const bar = document.createElement("span"); bar.className = "weak"; bar.style.width = Math.round(40 * g.weakness) + "px";
    tr.children[7].prepend(bar, " ");
    if (asked(g).length > QUERY_SHOWN) tr.children[0].title = asked(g);
  });
  // the table lists the first ten: how many gaps there are is said, and where to read the rest
  const moreGaps = h.gaps.gaps_count - h.gaps.gaps.length;
  $("gaps-note").textContent = `${counted(h.gaps.gaps_count, "gap")} among ${counted(h.gaps.groups, "query group")}` + (moreGaps > 0 ? ` (the first ${h.gaps.gaps.length} listed; \`briefd gaps --limit ${Math.min(h.gaps.gaps_count, 500)}\` lists more)` : "") + `; ${h.gaps.answered_useful} answered and reported useful` + (h.gaps.generic ? `; ${counted(h.gaps.generic, "group")} of hook prompts read as everyday chatter left out` : "") + (h.gaps.unlogged ? `; ${counted(h.gaps.unlogged, "request")} logged without text` : "");
  fillTable("drift-table", h.drift.documents.map((d) => [
    [d.doc_path], [d.commit_count, "num"], [`${d.since.slice(0, 10)} (${counted(d.days, "day")})`],
    [`${d.commits[0].hash.slice(0, 10)} ${d.commits[0].author}: ${d.commits[0].subject}`]]));
  const repos = h.drift.repos.map((r) => `${r.name} (${r.branch || "?"}${r.error ? ", error: " + r.error : ""})`).join(", ");
  // no document with refs: nothing can drift, which "nothing yet" alone read as all being current
  $("drift-note").textContent = !h.drift.repos.length ? "No code repositories configured (code.repos in briefd.yaml)."
    : h.drift.governed ? `${fmt(h.drift.drifting)} of ${counted(h.drift.governed, "document")} with refs drift, checked against ${repos}`
      // the server sends the longest drifting ten (with their latest commit): the rest are counted
      + (h.drift.drifting > h.drift.documents.length ? ` (the first ${h.drift.documents.length}, longest drifting, listed; \`briefd drift\` lists them all)` : "")
      // refs that cover no file never drift: "0 of N drift" alone read as all current
      + (h.drift.fix ? `. ${h.drift.fix}` : "")
      + (h.drift.uncovered_count ? `${h.drift.fix ? " " : "; "}${counted(h.drift.uncovered_count, "document")} with refs globs that cover no file of the code (a typo, or code moved or deleted: no change there is ever drift): ${h.drift.uncovered.map((u) => `${u.doc_path} (${u.globs.join(", ")})`).join("; ")}${h.drift.uncovered_count > h.drift.uncovered.length ? ", …; `briefd drift` lists them all" : ""}` : "")
    : `No indexed document has refs, so nothing is checked against ${repos}: give a document the code paths it governs in its front matter (refs: ["src/payments/**"]).`;
  $("usage-note").textContent = `${counted(h.usage.requests, "request")}; ${counted(h.usage.feedback_reports, "usage report")}, ${h.usage.nothing_helped} said nothing helped`;
  // an empty log: the charts' bare axes and "nothing yet" said nothing of why (a lead's searches
  // here are not logged) nor what to do
  $("health-empty").hidden = h.usage.requests > 0;
  const never = h.usage.never_served, unlisted = h.usage.never_served_count - never.length;
  fillList("never-list", never.length ? never.concat(unlisted > 0 ? [fold("all", [], unlisted, "", "`briefd usage --limit N` lists them")] : [])
    : [h.usage.documents.length ? "none: every indexed document was served in this window" : "none: no document is indexed"], () => renderHealth(h));
}

const NO_HEALTH = "cannot load knowledge health: ";

async function refreshHealth() {
  renderHealth(await api("/api/dashboard/health"));
  if ($("message").textContent.startsWith(NO_HEALTH)) message("", false);
}

// said at every failed load (the shared state down: 503), not only the first, until one loads
function noHealth(e) {
  if (e.message !== "unauthorized") message(NO_HEALTH + e.message, true);
}
