"""The gateway: HTTP lobby API, WebSocket play, and the browser client, over the streams."""
