// The install commands of the page "Doing the problem sets" (_ext/course_site.py) name the
// student kit by its address on the course site. The page fills that address in from its own
// location, so the commands are right wherever the site is served (the course's host, a mirror,
// a sub-path, a laptop). Without scripts the page keeps the address set in _config.yml, or the
// kit's file name and a note to download it first while that address is the placeholder.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const root = document.documentElement.dataset.content_root || "";
  for (const span of document.querySelectorAll("span.course-site-url[data-path]")) {
    span.textContent = new URL(root + span.dataset.path, document.baseURI).href;
  }
});
