// Progressive enhancement: refresh the progress of every run on the page from the JSON API
// until it is done. The page works without this script; it only saves a reload.
(function () {
  function refresh(element) {
    var id = element.getAttribute("data-run");
    fetch("/api/runs/" + encodeURIComponent(id), { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (run) {
        if (!run) { return; }
        element.querySelectorAll("[data-field]").forEach(function (field) {
          var name = field.getAttribute("data-field");
          if (name === "progress") { field.max = run.total; field.value = run.done; }
          else if (name in run) { field.textContent = run[name]; }
        });
        element.querySelectorAll("[data-count]").forEach(function (field) {
          field.textContent = run.counts[field.getAttribute("data-count")] || 0;
        });
        if (run.done < run.total) { setTimeout(function () { refresh(element); }, 2000); }
      })
      .catch(function () { setTimeout(function () { refresh(element); }, 5000); });
  }
  document.querySelectorAll("[data-run]").forEach(function (element) {
    var done = element.querySelector('[data-field="done"]');
    var total = element.querySelector('[data-field="total"]');
    if (done && total && done.textContent !== total.textContent) { refresh(element); }
  });
})();
