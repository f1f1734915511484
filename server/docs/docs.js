// Renders /api/v1/openapi.json with the embedded Swagger UI. Everything
// this page loads comes from this server: the Content-Security-Policy of
// /docs allows nothing else.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/api/v1/openapi.json",
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
