// Payment section: copy buttons and the payment countdown. No library; safe to load twice
// (htmx re-inserts the section after a form post).
(function () {
  "use strict";
  if (window.locagpuPayments) return;
  window.locagpuPayments = true;

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // Plain http (the devnet): the old way still works.
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "absolute";
    area.style.left = "-9999px";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } finally { document.body.removeChild(area); }
    return Promise.resolve();
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) return;
    var label = button.textContent;
    copyText(source.textContent.trim()).then(function () {
      button.textContent = document.documentElement.lang === "fr" ? "Copié ✓" : "Copied ✓";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  });

  function pad(n) { return n < 10 ? "0" + n : String(n); }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var left = Math.floor((Date.parse(el.getAttribute("data-countdown")) - now) / 1000);
      if (isNaN(left)) return;
      if (left <= 0) {
        el.textContent = el.getAttribute("data-expired-text");
        el.classList.add("countdown-over");
        return;
      }
      var hours = Math.floor(left / 3600);
      var minutes = Math.floor((left % 3600) / 60);
      el.textContent = (hours ? hours + ":" + pad(minutes) : minutes) + ":" + pad(left % 60);
      el.classList.toggle("countdown-soon", left < 300);
    });
  }
  tick();
  setInterval(tick, 1000);
})();
