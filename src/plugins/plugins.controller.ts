import { Controller, Get } from '@nestjs/common';
import { jsonSchema } from '../catalog/catalog.service';
import { plugins } from './plugins';

@Controller('plugins')
export class PluginsController {
  private readonly listing = {
    plugins: plugins.map((p) => ({
      name: p.name,
      description: p.description,
      fields: p.fields,
      secrets_schema: jsonSchema(p.secrets, 'input'),
      config_schema: jsonSchema(p.config, 'input'),
    })),
  };

  @Get()
  list() {
    return this.listing;
  }
}
