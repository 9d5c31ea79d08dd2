// Starts Swagger UI on /docs (a file, not an inline script: the content security policy refuses those).
(function () {
  var element = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: element.getAttribute("data-openapi"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
})();
