// The console's pages: the job list and a job's live page. Everything the job or the model
// wrote is shown with textContent, never as HTML (model output is untrusted).
"use strict";
const Console = (() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const say = (text, error) => {
    const m = $("message");
    m.textContent = text;
    m.className = error ? "error" : "";
  };
  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store" });
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }
  async function send(jobId, action, body) {
    say("sending " + action + "...");
    try {
      const r = await fetch(`/api/jobs/${encodeURIComponent(jobId)}/${action}`, {
        method: "POST", body: JSON.stringify(body || {}),
        headers: { "content-type": "application/json", "x-switchback-console": "1" },
      });
      const answer = await r.json();
      if (!r.ok) throw new Error(answer.error || r.statusText);
      say(answer.message);
    } catch (e) {
      say(action + ": " + e.message, true);
    }
  }

  async function list() {
    const body = document.querySelector("#jobs tbody");
    async function refresh() {
      try {
        const rows = await getJSON("/api/jobs");
        body.replaceChildren(...rows.map((r) => {
          const tr = el("tr");
          const a = el("a", "", r.id);
          a.href = "/jobs/" + encodeURIComponent(r.id);
          const first = el("td");
          first.append(a);
          tr.append(first, el("td", "status", r.status),
            el("td", "", r.phase ? `${r.phase} #${r.phase_number}` : ""),
            el("td", "", r.todos), el("td", "", String(r.tokens)),
            el("td", "", r.cost == null ? "" : "$" + r.cost.toFixed(4)),
            el("td", "", r.status === "failed" ? r.last_error : r.todo),
            el("td", "muted", r.started.replace("T", " ").slice(0, 19)));
          return tr;
        }));
        say(rows.length ? "" : "no jobs yet");
      } catch (e) {
        say("cannot list jobs: " + e.message, true);
      }
    }
    await refresh();
    setInterval(refresh, 3000);
  }

  // The live stream, folded: one block per model call, whose text a retried attempt
  // replaces (model.start/delta of a higher attempt void what was shown; model.end is whole).
  function stream(jobId, onChange) {
    const box = $("stream");
    const calls = new Map();
    let last = -1;
    const line = (cls, text) => {
      const stick = box.scrollTop + box.clientHeight >= box.scrollHeight - 20;
      const d = el("div", "ev " + cls, text);
      box.append(d);
      if (stick) box.scrollTop = box.scrollHeight;
      return d;
    };
    const modelBlock = (e) => {
      let c = calls.get(e.call);
      if (!c) {
        c = { attempt: e.attempt, text: "", node: line("model", "") };
        c.node.dataset.call = e.call;
        calls.set(e.call, c);
      }
      if (e.attempt > c.attempt) { c.attempt = e.attempt; c.text = ""; }
      return c;
    };
    const show = (c, tools) => {
      c.node.textContent = "[model] " + c.text + (tools && tools.length ? "  -> " + tools.join(", ") : "");
    };
    const handlers = {
      "phase": (e) => line("phase", `== phase ${e.number}: ${e.phase} ${e.title || ""}`),
      "todos": (e) => onChange(),
      "model.start": (e) => show(modelBlock(e)),
      "model.delta": (e) => {
        const c = modelBlock(e);
        if (e.attempt < c.attempt) return;
        c.text += e.text;
        show(c);
      },
      "model.end": (e) => { const c = modelBlock(e); c.text = e.text; show(c, e.tool_calls); },
      "tool.call": (e) => line("tool", `-> ${e.name}(${e.arguments})`),
      "tool.result": (e) => line("tool", `<- ${e.name}${e.ok ? "" : " (error)"}: ${e.text}`),
      "guard": (e) => line("guard", `refused [${e.name}]: ${e.message}`),
      "breaker": (e) => line("breaker", `breaker ${e.name}: ${e.message}`),
      "approval.waiting": (e) => { line("approval", `waiting for approval: ${e.name}(${e.arguments})`); onChange(); },
      "approval.decided": (e) => { line("approval", `${e.approved ? "approved" : "denied"}: ${e.name} ${e.note || ""}`); onChange(); },
      "outcome.unknown": (e) => line("guard", `outcome unknown: ${e.name} (it may or may not have acted)`),
      "turn": (e) => { line("phase", `== turn ${e.turn}: ${e.instruction}`); onChange(); },
      "end": (e) => { line("end", `== end: ${e.status} ${e.summary || ""}`); onChange(); },
    };
    const source = new EventSource(`/api/jobs/${encodeURIComponent(jobId)}/events`);
    source.onmessage = (m) => {
      const offset = Number(m.lastEventId);
      if (offset <= last) return;  // (a server that sent an offset again: shown once)
      last = offset;
      const e = JSON.parse(m.data);
      (handlers[e.kind] || (() => {}))(e);
    };
    source.addEventListener("closed", () => source.close());
    return source;
  }

  async function job(jobId) {
    $("job-id").textContent = jobId;
    document.title = jobId + " - switchback";
    async function refresh() {
      let v;
      try { v = await getJSON(`/api/jobs/${encodeURIComponent(jobId)}`); }
      catch (e) { say("cannot read the job: " + e.message, true); return; }
      const st = v.state;
      $("job-status").textContent = st ? st.status : v.execution.toLowerCase();
      if (st) {
        $("job-phase").textContent = `${st.phase.kind || ""} #${st.phase.number}`;
        $("job-tokens").textContent = `${st.tokens.tokens_in + st.tokens.tokens_out} tokens` +
          (st.cost_usd ? `, $${st.cost_usd.toFixed(4)}` : "");
        $("todos").replaceChildren(...st.todos.map((t) =>
          el("li", t.status === "completed" ? "done" : "", t.content)));
        $("current").textContent = st.current_todo ? "working on: " + st.current_todo : "";
        $("approvals").replaceChildren(...st.pending_approvals.map((p) => {
          const d = el("div", "ev approval", `${p.tool}(${p.arguments}) [${p.call_id}] `);
          const yes = el("button", "", "Approve"), no = el("button", "", "Deny");
          yes.onclick = () => send(jobId, "approve", { call_id: p.call_id, approved: true });
          no.onclick = () => send(jobId, "approve", { call_id: p.call_id, approved: false });
          d.append(yes, no);
          return d;
        }));
      } else if (v.memo) {
        $("current").textContent = "no worker answers; as persisted: " + (v.memo.progress.as_of || "");
      }
      const r = v.result;
      if (r) {
        const box = $("result");
        box.className = "";
        box.replaceChildren(el("div", "status", r.status), el("div", "", r.summary),
          el("div", "", "verified: " + (r.verified.join(", ") || "-")),
          el("div", r.missing.length ? "error" : "muted", "missing: " + (r.missing.join(", ") || "-")));
      } else if (!st || ["completed", "failed", "cancelled", "stuck"].includes(st.status)) {
        $("result").textContent = v.execution === "RUNNING" ? "not ended yet" : v.execution.toLowerCase();
      }
    }
    let pending = null;
    const soon = () => { clearTimeout(pending); pending = setTimeout(refresh, 200); };
    stream(jobId, soon);
    $("pause").onclick = () => send(jobId, "pause");
    $("resume").onclick = () => send(jobId, "resume");
    $("cancel").onclick = () => { if (confirm("Cancel " + jobId + "?")) send(jobId, "cancel"); };
    $("instruct").onclick = () => send(jobId, "instruct", { text: $("instruction").value });
    $("rewind").onclick = () => {
      const phase = $("restore-phase").value.trim();
      send(jobId, "rewind", { issue: $("issue").value,
                              restore_phase: phase ? Number(phase) : null });
    };
    await refresh();
    setInterval(refresh, 2000);
  }
  return { list, job };
})();
