// The service worker (served at /sw.js by gateway/pwa.py, which fills in the shell's
// files and a version that changes with any of them): it keeps the page's shell so
// the page opens with the network gone, and says so. Only the shell goes through it:
// the API, the WebSocket, health and metrics always go to the network.
//
// Network first: online, every file comes fresh from the server (and refreshes the
// copy); offline, or with the server out of reach, the copy answers.

const CACHE = "dudo-shell-__VERSION__";
const SHELL = __SHELL__;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(
        names.filter((n) => n.startsWith("dudo-shell-") && n !== CACHE).map((n) => caches.delete(n)),
      ))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  // Every page of the app is the one page (its routes are the part after #).
  const key = request.mode === "navigate" ? "/" : url.pathname;
  if (!SHELL.includes(key)) return;
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(key, copy));
        }
        return response;
      })
      .catch(() => caches.match(key).then((kept) => kept || Response.error())),
  );
});
