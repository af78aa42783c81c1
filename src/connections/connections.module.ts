import { Module } from '@nestjs/common';
import { CompositionsModule } from '../compositions/compositions.module';
import { ConnectionsController } from './connections.controller';
import { ConnectionsService } from './connections.service';

@Module({ imports: [CompositionsModule], controllers: [ConnectionsController], providers: [ConnectionsService] })
export class ConnectionsModule {}
