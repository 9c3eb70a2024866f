// gitquarry web page: progressive enhancement only (every action also works without it).
// Live job progress, copy buttons, the workspace switch, "back" links. No inline script.
"use strict";

(function () {
  document.documentElement.classList.add("js");
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  const announce = (text) => {
    const region = document.getElementById("announce");
    if (region) { region.textContent = ""; window.setTimeout(() => { region.textContent = text; }, 30); }
  };

  // Copy buttons: <button class="copy" data-copy="ID"> copies the text of element ID.
  const copyText = async (text) => {
    if (navigator.clipboard && window.isSecureContext) {
      try { await navigator.clipboard.writeText(text); return true; } catch (e) { /* fall back */ }
    }
    const area = document.createElement("textarea");
    area.value = text; area.setAttribute("readonly", ""); area.className = "visually-hidden";
    document.body.appendChild(area); area.select();
    let ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    area.remove();
    return ok;
  };
  document.querySelectorAll("button[data-copy]").forEach((button) => {
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      if (!source) { return; }
      const label = button.textContent;
      const ok = await copyText(source.textContent);
      button.textContent = ok ? "Copied" : "Select and copy manually";
      button.dataset.copied = ok ? "yes" : "no";
      announce(ok ? "Copied to the clipboard" : "Could not copy: select the text and copy it");
      window.setTimeout(() => { button.textContent = label; }, 2000);
    });
  });

  // Workspace switch: submit on change.
  document.querySelectorAll("select[data-autosubmit]").forEach((select) => {
    select.addEventListener("change", () => { if (select.form) { select.form.submit(); } });
  });

  // "Back to results": use the browser history when we came from this site.
  document.querySelectorAll("a[data-back]").forEach((link) => {
    link.addEventListener("click", (event) => {
      if (document.referrer === "" && window.history.length > 1) {
        event.preventDefault(); window.history.back();
      }
    });
  });

  // Live progress: poll /api/jobs/ID while the job is not finished.
  const TERMINAL = new Set(["succeeded", "cancelled", "superseded", "failed", "interrupted"]);
  document.querySelectorAll("[data-live-job]").forEach((box) => {
    const id = box.dataset.liveJob;
    const field = (name) => box.querySelector('[data-field="' + name + '"]');
    let stopped = false;
    const tick = async () => {
      if (stopped) { return; }
      let data;
      try {
        const response = await fetch("/api/jobs/" + encodeURIComponent(id), {
          headers: { "Accept": "application/json", "X-CSRF-Token": csrf },
          credentials: "same-origin", cache: "no-store",
        });
        if (!response.ok) { stopped = true; box.dataset.liveError = String(response.status); return; }
        data = await response.json();
      } catch (e) { window.setTimeout(tick, 2000); return; }
      const job = data.job || {};
      const p = job.progress || {};
      const status = field("status");
      if (status) { status.textContent = job.status; status.className = "badge s-" + job.status; }
      if (field("phase")) { field("phase").textContent = p.phase || ""; }
      if (field("count")) { field("count").textContent = p.total ? (p.done + " / " + p.total) : (p.done ? String(p.done) : ""); }
      const bar = field("bar");
      if (bar) { bar.max = p.total || 1; bar.value = p.done || 0; bar.textContent = String(p.done || 0); }
      box.dataset.liveStatus = job.status;
      box.dataset.liveDone = String(p.done || 0);
      if (job.terminal || TERMINAL.has(job.status)) {
        stopped = true;
        document.querySelectorAll('[data-hide-when-done="' + id + '"]').forEach((el) => { el.hidden = true; });
        announce("Job " + id + " " + job.status);
        return;
      }
      window.setTimeout(tick, 500);
    };
    window.setTimeout(tick, 300);
  });
})();
