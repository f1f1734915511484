// Renders the API document with the embedded Swagger UI. Everything this
// page loads comes from this server: the Content-Security-Policy of /docs
// allows nothing else. The document's URL is the page's own link to it,
// relative in the HTML and resolved by the browser, so the page also works
// behind a reverse proxy that serves the API under a path prefix.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: document.getElementById("pk-openapi").href,
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    presets: [SwaggerUIBundle.presets.apis],
    deepLinking: true,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    displayOperationId: false,
    tryItOutEnabled: false,
    // No badge from validator.swagger.io: the page makes no request
    // outside this server.
    validatorUrl: null,
  });
});
