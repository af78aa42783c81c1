import { Controller, Get, Header } from '@nestjs/common';
import { Public } from '../auth/principal';
import { openApiDocument } from './document';

const DOCS_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Workflow Engine API</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#ui', persistAuthorization: true });</script>
</body></html>`;

@Controller()
export class OpenApiController {
  private readonly document = openApiDocument();

  @Public()
  @Get('openapi.json')
  openapi() {
    return this.document;
  }

  @Public()
  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  docs() {
    return DOCS_PAGE;
  }
}
