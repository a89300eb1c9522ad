// Payment section: the payment countdown (copy buttons are site-wide, in site.js). No library;
// safe to load twice (htmx re-inserts the section after a form post).
(function () {
  "use strict";
  if (window.locagpuPayments) return;
  window.locagpuPayments = true;

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
