import { Module } from '@nestjs/common';
import { CompositionsModule } from '../compositions/compositions.module';
import { CatalogController } from './catalog.controller';
import { CatalogService } from './catalog.service';

@Module({ imports: [CompositionsModule], controllers: [CatalogController], providers: [CatalogService], exports: [CatalogService] })
export class CatalogModule {}
