import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { HooksController } from './hooks.controller';
import { HooksService } from './hooks.service';
import { IngressController } from './ingress.controller';
import { IngressService } from './ingress.service';

/** Webhook redirects: endpoints and events (bearer token) and the public ingress. */
@Module({ imports: [RunsModule], controllers: [HooksController, IngressController], providers: [HooksService, IngressService] })
export class HooksModule {}
