// Sign-up: the browser's time zone goes in the hidden field, so times are shown in it.
(function () {
  "use strict";
  var field = document.querySelector("input[name=time_zone]");
  if (!field || field.value) return;
  try {
    field.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (error) {
    // An old browser: the store's zone stands in, the profile page can change it.
  }
})();
